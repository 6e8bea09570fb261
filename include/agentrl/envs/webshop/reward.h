// WebShop's purchase reward, reproduced from web_agent_site/engine/goal.py
// get_reward / get_type_reward / get_attribute_reward / get_option_reward.
//
//   r_type:  1.0 if the query matches, or >= 2 '›'-separated category parts
//            are shared, or the title-noun overlap > 0.2; else 0.5; then 0.1
//            if the overlap < 0.1 and 0.0 if it is 0 (overlap = |nouns(goal
//            name) ∩ nouns(product name)| / |nouns(goal name)|, 0.2 when the
//            goal name has no nouns);
//   n_att:   goal attributes matched by token_set_ratio > 85 against a
//            product attribute, or found as a substring of the lowercased
//            title, ' '.join(bullet points) or description;
//   n_opt:   goal options (colour-normalised) matched by token_set_ratio > 85
//            against a chosen option (colour-normalised);
//   r_price: price <= price_upper;
//   total  = (n_att + n_opt + r_price) / (|A| + |O| + 1) * r_type.
// The noun filter is a rule-based substitute for spaCy (see text_match.h).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "agentrl/envs/webshop/product.h"

namespace agentrl::envs::webshop {

struct TypeReward {
  double r_type = 0;
  bool query_match = false;
  bool category_match = false;
  double title_score = 0;
};

struct RewardInfo {
  double total = 0;
  TypeReward type;
  double r_att = 0;
  int num_attr_matches = 0;
  bool has_r_option = false;  // false when the goal has no options (goal.py's None)
  double r_option = 0;
  int num_option_matches = 0;
  bool r_price = false;
  double w_att = 0, w_option = 0, w_price = 0;
};

// The fields of a product and a goal that get_type_reward reads.
TypeReward type_reward(const std::string& purchased_query, const std::string& purchased_product_category,
                       const std::string& purchased_name, const Goal& goal);
// get_type_reward's decision from its three signals (the r_type rule above).
double type_score(bool query_match, bool category_match, double title_score);
// get_attribute_reward: (r_attr, num_attr_matches).
std::pair<double, int> attribute_reward(const Product& purchased, const std::vector<std::string>& goal_attributes);
// get_option_reward with goal options given as a dict (options_are_dict:
// (name, value) pairs, as dict.items() passes them) or a list of values.
// has_r_option is false when there are no goal options.
struct OptionReward {
  bool defined = false;
  double r_option = 0;
  int matches = 0;
};
OptionReward option_reward(const std::vector<std::string>& purchased_options, const std::vector<GoalOption>& goal_options,
                           bool options_are_dict);
// get_reward. `chosen_options`: the values selected on the item page.
RewardInfo get_reward(const Product& purchased, const Goal& goal, double price,
                      const std::vector<std::string>& chosen_options);
// The last step of get_reward: total and the weights from info's parts
// (type.r_type, num_attr_matches, num_option_matches, r_price) and the
// goal's numbers of attributes and options.
void combine_reward(const Goal& goal, RewardInfo& info);

}  // namespace agentrl::envs::webshop
