// Writer and reader of /environment (docs/schema.md): parallel 1-D string
// datasets, one per fact, like the rest of the file.
#include "environment_file.hpp"

#include "hdf5_util.hpp"

namespace tremor {
namespace {

using hdf5::column;
using hdf5::Handle;
using hdf5::same_length;

constexpr const char* kGroup = "/environment";

// A name/value list keyed by an int32 column (node index or rank).
template <typename Row>
bool write_keyed(hid_t file, const std::string& path, const char* key, const std::vector<Row>& rows,
                 std::int32_t Row::*key_member, std::string& error) {
  Handle group = hdf5::open_or_create_group(file, path, error);
  return group.valid() && hdf5::write_vector(group.get(), key, column(rows, key_member), error) &&
         hdf5::write_strings(group.get(), "name", column(rows, &Row::name), error) &&
         hdf5::write_strings(group.get(), "value", column(rows, &Row::value), error);
}

template <typename Row>
bool read_keyed(hid_t file, const std::string& path, const char* key, std::vector<Row>& rows,
                std::int32_t Row::*key_member, std::string& error) {
  std::vector<std::int32_t> keys;
  std::vector<std::string> names, values;
  if (!hdf5::read_vector(file, path + "/" + key, keys, error) ||
      !hdf5::read_strings(file, path + "/name", names, error) ||
      !hdf5::read_strings(file, path + "/value", values, error) ||
      !same_length(names.size(), keys.size(), path + "/name", error) ||
      !same_length(values.size(), keys.size(), path + "/value", error))
    return false;
  rows.resize(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    rows[i].*key_member = keys[i];
    rows[i].name = std::move(names[i]);
    rows[i].value = std::move(values[i]);
  }
  return true;
}

}  // namespace

bool write_environment(hid_t file, const RunEnvironment& environment, std::string& error) {
  if (!environment.recorded()) return true;
  const std::string group(kGroup);
  Handle nodes = hdf5::open_or_create_group(file, group + "/nodes", error);
  if (!nodes.valid() ||
      !hdf5::write_strings(nodes.get(), "hostname", column(environment.nodes, &NodeEnvironment::hostname), error))
    return false;
  for (std::size_t i = 0; i < kNodeFacts.size(); ++i) {
    std::vector<std::string> values;
    for (const NodeEnvironment& node : environment.nodes) values.push_back(node.facts[i]);
    if (!hdf5::write_strings(nodes.get(), std::string(kNodeFacts[i]), values, error)) return false;
  }
  Handle ranks = hdf5::open_or_create_group(file, group + "/ranks", error);
  return ranks.valid() &&
         hdf5::write_vector(ranks.get(), "rank", column(environment.ranks, &RankEnvironment::rank), error) &&
         hdf5::write_strings(ranks.get(), "hostname", column(environment.ranks, &RankEnvironment::hostname), error) &&
         hdf5::write_strings(ranks.get(), "affinity", column(environment.ranks, &RankEnvironment::affinity), error) &&
         hdf5::write_strings(ranks.get(), "shares_cpu_with",
                             column(environment.ranks, &RankEnvironment::shares_cpu_with), error) &&
         hdf5::write_strings(ranks.get(), "shares_core_with",
                             column(environment.ranks, &RankEnvironment::shares_core_with), error) &&
         write_keyed(file, group + "/variables", "node", environment.variables, &NodeVariable::node, error) &&
         write_keyed(file, group + "/rank_differences", "rank", environment.differences, &RankDifference::rank, error);
}

bool read_environment(hid_t file, std::size_t world_size, RunEnvironment& environment, std::string& error) {
  environment = RunEnvironment{};
  if (!hdf5::link_exists(file, kGroup)) return true;
  const std::string group(kGroup);
  std::vector<std::string> hostnames;
  if (!hdf5::read_strings(file, group + "/nodes/hostname", hostnames, error)) return false;
  environment.nodes.resize(hostnames.size());
  for (std::size_t n = 0; n < hostnames.size(); ++n) environment.nodes[n].hostname = std::move(hostnames[n]);
  for (std::size_t i = 0; i < kNodeFacts.size(); ++i) {
    const std::string path = group + "/nodes/" + std::string(kNodeFacts[i]);
    std::vector<std::string> values;
    // A fact added by a later Tremor is unknown in an earlier file.
    if (!hdf5::link_exists(file, path))
      values.assign(environment.nodes.size(), unknown_fact("not in this file"));
    else if (!hdf5::read_strings(file, path, values, error))
      return false;
    if (!same_length(values.size(), environment.nodes.size(), path, error)) return false;
    for (std::size_t n = 0; n < values.size(); ++n) environment.nodes[n].facts[i] = std::move(values[n]);
  }
  std::vector<std::int32_t> rank;
  std::vector<std::string> rank_host, affinity, shares_cpu, shares_core;
  const std::string ranks = group + "/ranks/";
  if (!hdf5::read_vector(file, ranks + "rank", rank, error) ||
      !hdf5::read_strings(file, ranks + "hostname", rank_host, error) ||
      !hdf5::read_strings(file, ranks + "affinity", affinity, error) ||
      !hdf5::read_strings(file, ranks + "shares_cpu_with", shares_cpu, error) ||
      !hdf5::read_strings(file, ranks + "shares_core_with", shares_core, error) ||
      !same_length(rank.size(), world_size, ranks + "rank", error) ||
      !same_length(rank_host.size(), world_size, ranks + "hostname", error) ||
      !same_length(affinity.size(), world_size, ranks + "affinity", error) ||
      !same_length(shares_cpu.size(), world_size, ranks + "shares_cpu_with", error) ||
      !same_length(shares_core.size(), world_size, ranks + "shares_core_with", error))
    return false;
  for (std::size_t r = 0; r < world_size; ++r)
    environment.ranks.push_back({rank[r], rank_host[r], affinity[r], shares_cpu[r], shares_core[r]});
  if (!read_keyed(file, group + "/variables", "node", environment.variables, &NodeVariable::node, error) ||
      !read_keyed(file, group + "/rank_differences", "rank", environment.differences, &RankDifference::rank, error))
    return false;
  for (const NodeVariable& variable : environment.variables) {
    if (variable.node < 0 || static_cast<std::size_t>(variable.node) >= environment.nodes.size()) {
      error = group + "/variables/node holds node " + std::to_string(variable.node) + " but there are " +
              std::to_string(environment.nodes.size()) + " nodes";
      return false;
    }
  }
  return true;
}

}  // namespace tremor
