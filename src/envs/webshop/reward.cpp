// WebShop reward; see reward.h and web_agent_site/engine/goal.py.
#include "agentrl/envs/webshop/reward.h"

#include <set>

#include "agentrl/core/strings.h"
#include "agentrl/envs/webshop/text_match.h"

namespace agentrl::envs::webshop {
namespace {

std::string lower(const std::string& s) { return unicode_lower(s); }

std::set<std::string> category_parts(const std::string& pc) {
  std::set<std::string> parts;
  const std::string sep = "\xE2\x80\xBA";  // '›' U+203A
  size_t start = 0;
  while (true) {
    size_t pos = pc.find(sep, start);
    std::string part = pc.substr(start, pos == std::string::npos ? std::string::npos : pos - start);
    parts.insert(strings::trim(part));
    if (pos == std::string::npos) break;
    start = pos + sep.size();
  }
  return parts;
}

}  // namespace

TypeReward type_reward(const std::string& purchased_query, const std::string& purchased_product_category,
                       const std::string& purchased_name, const Goal& goal) {
  TypeReward r;
  r.query_match = purchased_query == goal.query;
  std::set<std::string> a = category_parts(purchased_product_category), b = category_parts(goal.product_category);
  size_t shared = 0;
  for (const auto& x : a) shared += b.count(x);
  r.category_match = shared >= 2;
  std::vector<std::string> purchased_nouns = title_nouns(purchased_name);
  std::vector<std::string> desired_nouns = title_nouns(goal.name);
  std::set<std::string> ps(purchased_nouns.begin(), purchased_nouns.end());
  std::set<std::string> ds(desired_nouns.begin(), desired_nouns.end());
  size_t inter = 0;
  for (const auto& x : ds) inter += ps.count(x);
  r.title_score = desired_nouns.empty() ? 0.2 : static_cast<double>(inter) / static_cast<double>(desired_nouns.size());
  r.r_type = type_score(r.query_match, r.category_match, r.title_score);
  return r;
}

double type_score(bool query_match, bool category_match, double title_score) {
  double r_type = 1.0;
  if (!(query_match || category_match || title_score > 0.2)) r_type = 0.5;
  if (title_score < 0.1) r_type = 0.1;
  if (title_score == 0.0) r_type = 0.0;
  return r_type;
}

std::pair<double, int> attribute_reward(const Product& purchased, const std::vector<std::string>& goal_attributes) {
  int matches = 0;
  std::string title, bullets, desc;
  bool lowered = false;
  for (const auto& g : goal_attributes) {
    bool matched = false;
    for (const auto& p : purchased.attributes) {
      if (token_set_ratio(p, g) > 85) {
        ++matches;
        matched = true;
        break;
      }
    }
    if (!matched) {
      if (!lowered) {
        title = lower(purchased.title);
        std::string joined;
        for (size_t i = 0; i < purchased.bullet_points.size(); ++i)
          joined += (i ? " " : "") + purchased.bullet_points[i];
        bullets = lower(joined);
        desc = lower(purchased.description);
        lowered = true;
      }
      if (title.find(g) != std::string::npos || bullets.find(g) != std::string::npos ||
          desc.find(g) != std::string::npos)
        ++matches;
    }
  }
  if (goal_attributes.empty()) return {0.0, 0};  // goal.py would divide by zero
  return {static_cast<double>(matches) / static_cast<double>(goal_attributes.size()), matches};
}

OptionReward option_reward(const std::vector<std::string>& purchased_options, const std::vector<GoalOption>& goal_options,
                           bool options_are_dict) {
  std::vector<std::string> purchased;
  for (const auto& o : purchased_options) purchased.push_back(normalize_color(o));
  // A dict's items() are (name, value) tuples: normalize_color's `c in t`
  // is then tuple membership (a colour equal to the name or the value), and
  // token_set_ratio sees str(tuple), whose tokens are those of "name value".
  std::vector<std::string> goals;
  for (const auto& g : goal_options) {
    if (!options_are_dict) {
      goals.push_back(normalize_color(g.value));
      continue;
    }
    std::string norm;
    for (const auto& c : color_set()) {
      if (c == g.name || c == g.value) {
        norm = c;
        break;
      }
    }
    goals.push_back(norm.empty() ? "('" + g.name + "', '" + g.value + "')" : norm);
  }
  OptionReward r;
  for (const auto& g : goals) {
    for (const auto& p : purchased) {
      if (token_set_ratio(p, g) > 85) {
        ++r.matches;
        break;
      }
    }
  }
  r.defined = !goals.empty();
  r.r_option = r.defined ? static_cast<double>(r.matches) / static_cast<double>(goals.size()) : 0.0;
  return r;
}

RewardInfo get_reward(const Product& purchased, const Goal& goal, double price,
                      const std::vector<std::string>& chosen_options) {
  RewardInfo info;
  info.type = type_reward(purchased.query, purchased.product_category, purchased.title, goal);
  info.r_price = price <= goal.price_upper;
  auto [r_att, n_att] = attribute_reward(purchased, goal.attributes);
  info.r_att = r_att;
  info.num_attr_matches = n_att;
  OptionReward o = option_reward(chosen_options, goal.goal_options, goal.options_are_dict);
  info.has_r_option = o.defined;
  info.r_option = o.r_option;
  info.num_option_matches = o.matches;
  combine_reward(goal, info);
  return info;
}

void combine_reward(const Goal& goal, RewardInfo& info) {
  const double denom = static_cast<double>(goal.attributes.size() + goal.goal_options.size() + 1);
  info.total = (info.num_attr_matches + info.num_option_matches + (info.r_price ? 1 : 0)) / denom * info.type.r_type;
  info.w_att = static_cast<double>(goal.attributes.size()) / denom;
  info.w_option = static_cast<double>(goal.goal_options.size()) / denom;
  info.w_price = 1.0 / denom;
}

}  // namespace agentrl::envs::webshop
