"""tremor-plot: HTML and PNG reports from a Tremor run file."""
