#include "groups.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace tremor::analysis::detail {

std::vector<std::size_t> PrimaryGroup::all_members() const {
  std::vector<std::size_t> all = members;
  if (warm_up) all.insert(std::lower_bound(all.begin(), all.end(), *warm_up), *warm_up);
  return all;
}

std::vector<PrimaryGroup> split_by_previous_group(const RunAnalysis& analysis, std::span<const std::int64_t> membership,
                                                  std::size_t min_size, std::vector<std::uint8_t>& split_off) {
  std::vector<std::vector<std::size_t>> members_of(analysis.groups.size());
  for (std::size_t segment = 0; segment < membership.size(); ++segment) {
    const std::int64_t g = membership[segment];
    if (g >= 0 && static_cast<std::size_t>(g) < members_of.size())
      members_of[static_cast<std::size_t>(g)].push_back(segment);
  }
  std::vector<PrimaryGroup> result;
  for (std::size_t g = 0; g < analysis.groups.size(); ++g) {
    if (!analysis.groups[g].usable) continue;
    const std::vector<std::size_t>& group_members = members_of[g];
    std::map<std::int64_t, std::vector<std::size_t>> by_previous;
    for (const std::size_t segment : group_members) {
      const std::int64_t previous = segment == 0 ? -2 : membership[segment - 1];
      by_previous[previous].push_back(segment);
    }
    std::size_t covered = 0;
    std::vector<std::size_t>* largest = nullptr;
    for (auto& [previous, members] : by_previous) {
      if (members.size() >= min_size) covered += members.size();
      if (!largest || members.size() > largest->size()) largest = &members;
    }
    if (by_previous.size() == 1 ||
        static_cast<double>(covered) < kMinSplitCoverage * static_cast<double>(group_members.size())) {
      result.push_back({g, group_members, std::nullopt});
      continue;
    }
    std::vector<std::size_t> main = *largest;
    for (auto& [previous, members] : by_previous) {
      if (&members == largest) continue;
      if (members.size() >= min_size) {
        for (const std::size_t segment : members) split_off[segment] = 1;
        result.push_back({g, std::move(members), std::nullopt});
      } else {
        main.insert(main.end(), members.begin(), members.end());
      }
    }
    std::sort(main.begin(), main.end());
    result.push_back({g, std::move(main), std::nullopt});
  }
  return result;
}

std::size_t set_warm_up_apart(std::vector<PrimaryGroup>& groups) {
  std::size_t apart = 0;
  for (PrimaryGroup& group : groups) {
    if (group.members.size() <= kMinMembersForWarmUp) continue;
    const auto first = std::min_element(group.members.begin(), group.members.end());
    group.warm_up = *first;
    group.members.erase(first);
    ++apart;
  }
  return apart;
}

}  // namespace tremor::analysis::detail
