// WebShop's goal sampling from its real data (web_agent_site/engine/goal.py).
#include "agentrl/envs/webshop/goals.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "agentrl/core/error.h"
#include "agentrl/envs/webshop/python_random.h"

namespace agentrl::envs::webshop {

const std::vector<double>& price_range() {
  static const std::vector<double> r = [] {
    std::vector<double> v;
    for (int i = 1; i < 100; ++i) v.push_back(10.0 * i);
    return v;
  }();
  return r;
}

namespace {
// goal.py: price_range = [p for p in PRICE_RANGE if p > price][:4]; if at
// least 2: price_upper = max of random.sample(price_range, 2).
std::pair<double, std::string> draw_price_upper(double price, PyRandom& rng) {
  std::vector<double> range;
  for (double p : price_range())
    if (p > price && range.size() < 4) range.push_back(p);
  if (range.size() < 2) return {1000000.0, ""};
  auto s = rng.sample(range, 2);
  double upper = std::max(s[0], s[1]);
  char buf[64];
  std::snprintf(buf, sizeof buf, ", and price lower than %.2f dollars", upper);
  return {upper, buf};
}

std::string strip_dots(const std::string& s) {
  size_t b = s.find_first_not_of('.');
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of('.');
  return s.substr(b, e - b + 1);
}
}  // namespace

std::unordered_map<std::string, double> product_prices(const ProductStore& store, PyRandom& rng) {
  std::unordered_map<std::string, double> prices;
  for (const auto& p : store.all()) {
    if (p.pricing.empty())
      prices[p.asin] = 100.0;
    else if (p.pricing.size() == 1)
      prices[p.asin] = p.pricing[0];
    else
      prices[p.asin] = rng.uniform(p.pricing[0], p.pricing[1]);
  }
  return prices;
}

std::vector<Goal> human_goals(const ProductStore& store, const AnnotationMap& annotations,
                              const std::unordered_map<std::string, double>& prices, PyRandom& rng) {
  std::vector<Goal> goals;
  for (const auto& p : store.all()) {
    auto a = annotations.find(p.asin);
    if (a == annotations.end() || a->second.human.empty()) continue;
    for (const auto& h : a->second.human) {
      if (h.attributes.empty()) continue;
      auto [upper, text] = draw_price_upper(prices.at(p.asin), rng);
      Goal g = goal_for_product(p);
      g.instruction_text = strip_dots(h.instruction) + text;
      g.attributes = h.attributes;
      g.price_upper = upper;
      g.options_are_dict = false;
      for (const auto& o : h.options) g.goal_options.push_back({"", o});
      g.weight = 1.0;
      goals.push_back(std::move(g));
    }
  }
  return goals;
}

std::vector<Goal> synthetic_goals(const ProductStore& store, const AnnotationMap& annotations,
                                  const std::unordered_map<std::string, double>& prices, PyRandom& rng) {
  std::vector<Goal> goals;
  std::map<std::string, double> cnt_atts;
  for (const auto& p : store.all()) {
    auto a = annotations.find(p.asin);
    if (a == annotations.end() || !a->second.has_instruction) continue;
    if (a->second.instruction_attributes.empty())
      throw FormatError("WebShop attributes: asin " + p.asin + " has an instruction but no instruction_attributes");
    auto [upper, text] = draw_price_upper(prices.at(p.asin), rng);
    // itertools.product over the options sorted by name.
    std::vector<std::pair<std::string, std::vector<std::string>>> opts(p.options.begin(), p.options.end());
    std::sort(opts.begin(), opts.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<size_t> idx(opts.size(), 0);
    bool any_empty = false;
    for (const auto& o : opts) any_empty |= o.second.empty();
    if (any_empty) continue;  // itertools.product of an empty list yields nothing
    while (true) {
      Goal g = goal_for_product(p);
      g.attributes = a->second.instruction_attributes;
      g.price_upper = upper;
      std::string option_text;
      for (size_t k = 0; k < opts.size(); ++k) {
        g.goal_options.push_back({opts[k].first, opts[k].second[idx[k]]});
        option_text += (k ? ", and " : "") + opts[k].first + ": " + opts[k].second[idx[k]];
      }
      if (!option_text.empty()) option_text = " with " + option_text;
      g.instruction_text = a->second.instruction + option_text + text;
      for (const auto& att : g.attributes) cnt_atts[att] += 1;
      goals.push_back(std::move(g));
      if (opts.empty()) break;
      // Advance the odometer, last option fastest (itertools.product order).
      size_t k = opts.size();
      bool carry = true;
      while (carry && k > 0) {
        --k;
        if (++idx[k] < opts[k].second.size())
          carry = false;
        else
          idx[k] = 0;
      }
      if (carry) break;
    }
  }
  for (auto& g : goals) {
    double w = 0;
    for (const auto& att : g.attributes) w += 1.0 / cnt_atts[att];
    g.weight = w / static_cast<double>(g.attributes.size());
  }
  return goals;
}

void webshop_goal_shuffle(std::vector<Goal>& goals) {
  PyRandom rng(233);
  rng.shuffle(goals);
}

}  // namespace agentrl::envs::webshop
