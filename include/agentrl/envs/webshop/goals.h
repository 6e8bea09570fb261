// WebShop's goals drawn from its real data, as web_agent_site/engine/goal.py
// draws them: human goals (items_human_ins.json) and synthetic goals (one per
// option combination of each product with an instruction), product prices,
// price upper bounds and the split shuffle.
//
// Errors: FormatError for annotations WebShop itself could not use (an
// instruction without instruction_attributes).
// Thread-safety: free functions; each draws from the PyRandom it is given.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "agentrl/envs/webshop/product.h"

namespace agentrl::envs::webshop {

// WebShop's PRICE_RANGE = [10, 20, ..., 990].
const std::vector<double>& price_range();

// get_human_goals / get_synthetic_goals in product order; prices of
// two-number pricings drawn with random.uniform and price_upper with
// random.sample, both from `rng` (WebShop draws them unseeded; here they are
// reproducible). `prices` receives each product's price (asin -> price).
class PyRandom;
std::vector<Goal> human_goals(const ProductStore& store, const AnnotationMap& annotations,
                              const std::unordered_map<std::string, double>& prices, PyRandom& rng);
std::vector<Goal> synthetic_goals(const ProductStore& store, const AnnotationMap& annotations,
                                  const std::unordered_map<std::string, double>& prices, PyRandom& rng);
// generate_product_prices: pricing[0], or uniform(pricing[0], pricing[1]).
std::unordered_map<std::string, double> product_prices(const ProductStore& store, PyRandom& rng);
// WebShop's split order: random.seed(233); random.shuffle(goals).
void webshop_goal_shuffle(std::vector<Goal>& goals);

}  // namespace agentrl::envs::webshop
