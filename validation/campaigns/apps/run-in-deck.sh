#!/bin/sh
# Runs a real application (one MPI rank per invocation) inside a fresh copy of
# an input deck: usage run-in-deck.sh DECK_DIR COMMAND [ARGS...]
# The copy is $TREMOR_OUTPUT_DIR/app (the campaign gives every run a fresh
# output directory, shared by its ranks), or ./app-run without it. Every rank
# stages its own copy and renames it into place; the first rename wins, so
# no rank ever sees a half-copied deck.
set -eu
deck=$1
shift
target=${TREMOR_OUTPUT_DIR:-.}/app
[ -d "$TREMOR_OUTPUT_DIR" ] 2>/dev/null || target=./app-run
if [ ! -d "$target" ]; then
  staging="$target.staging.$$"
  cp -R "$deck" "$staging"
  mv -T "$staging" "$target" 2>/dev/null || rm -rf "$staging"
fi
cd "$target"
exec "$@"
