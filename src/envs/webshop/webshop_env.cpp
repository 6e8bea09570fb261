// WebShop text env: pages, transitions, observations and the oracle expert.
// Page texts follow WebShop's templates (web_agent_site/templates/*.html) as
// seen through its simple-mode converter (visible text nodes, stripped,
// joined by " [SEP] "); transitions follow SimServer.receive in
// web_agent_site/envs/web_agent_text_env.py.
#include <algorithm>
#include <cstdio>

#include "agentrl/core/error.h"
#include "agentrl/core/strings.h"
#include "agentrl/envs/webshop/text_match.h"
#include "agentrl/envs/webshop/webshop_env.h"

namespace agentrl::envs::webshop {
namespace {

constexpr size_t kProductsPerPage = 10;  // engine.py PRODUCT_WINDOW
const char* const kSep = " [SEP] ";

std::string lower(std::string s) { return strings::lower_ascii(std::move(s)); }

std::string upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

// Python's str.split(sep) for a non-empty sep.
std::vector<std::string> split_on(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t at; (at = s.find(sep, from)) != std::string::npos; from = at + sep.size()) out.push_back(s.substr(from, at - from));
  out.push_back(s.substr(from));
  return out;
}

// Visible texts -> simple-mode observation.
std::string join_texts(const std::vector<std::string>& texts) {
  std::string out;
  for (const auto& t : texts) {
    std::string s = strings::trim(t);
    if (s.empty()) continue;
    if (!out.empty()) out += kSep;
    out += s;
  }
  return out;
}

// Flask's tojson of a str -> str dict: sorted keys, ASCII-only, HTML-safe.
std::string flask_tojson(std::vector<std::pair<std::string, std::string>> kv) {
  std::sort(kv.begin(), kv.end());
  auto enc = [](const std::string& s) {
    std::string o = "\"";
    for (char32_t c : utf8_to_u32(s)) {
      char buf[16];
      if (c == '"' || c == '\\') {
        o.push_back('\\');
        o.push_back(static_cast<char>(c));
      } else if (c == '<' || c == '>' || c == '&' || c == '\'' || c < 0x20 || c > 0x7e) {
        if (c > 0xFFFF) {
          unsigned v = static_cast<unsigned>(c) - 0x10000;
          std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
        } else {
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
        }
        o += buf;
      } else {
        o.push_back(static_cast<char>(c));
      }
    }
    return o + "\"";
  };
  std::string out = "{";
  for (size_t i = 0; i < kv.size(); ++i) out += (i ? ", " : "") + enc(kv[i].first) + ": " + enc(kv[i].second);
  return out + "}";
}

}  // namespace

std::pair<std::string, std::optional<std::string>> parse_action(const std::string& action) {
  // re.match(r'(.+)\[(.+)\]'): '.' does not match '\n', so the match lies in
  // the first line; group 1 is greedy, so '[' is the last one that still
  // leaves a non-empty group 2 before the last ']' of the line.
  const std::string line = action.substr(0, action.find('\n'));
  const size_t q = line.rfind(']');
  if (q != std::string::npos && q >= 3) {
    for (size_t p = q - 2 + 1; p-- > 1;) {
      if (line[p] == '[') return {line.substr(0, p), line.substr(p + 1, q - p - 1)};
    }
  }
  return {action, std::nullopt};
}

WebshopEnv::WebshopEnv(std::shared_ptr<const WebshopData> data) : data_(std::move(data)) {}

std::string WebshopEnv::reset(const Task& task, uint64_t seed) {
  (void)seed;  // WebShop episodes are deterministic given the goal
  return reset_goal(parse_goal_task_id(task.id));
}

std::string WebshopEnv::reset_goal(size_t goal_index) {
  if (goal_index >= data_->goals.size())
    throw ConfigError("WebShop goal index " + std::to_string(goal_index) + " out of range (have " +
                      std::to_string(data_->goals.size()) + " goals)");
  goal_ = &data_->goals[goal_index];
  page_ = Page::kSearch;
  keywords_.clear();
  results_page_ = 1;
  results_.clear();
  item_ = nullptr;
  options_.clear();
  steps_ = 0;
  done_ = false;
  reward_ = 0;
  return observation();
}

std::string WebshopEnv::task_description() const { return goal_ ? goal_->instruction_text : ""; }

std::string WebshopEnv::observation() const {
  std::string text = simple_observation();
  if (data_->observation_mode != "verl-agent" || !goal_) return text;
  // verl-agent's format_obs: the texts after the first one equal to the
  // instruction, each in single quotes, joined by " [SEP] " (the page's
  // header up to the instruction dropped); a page without the instruction
  // (the done page) stays as it is.
  const auto parts = split_on(text, kSep);
  const auto at = std::find(parts.begin(), parts.end(), goal_->instruction_text);
  if (at == parts.end()) return text;
  std::string out;
  for (auto it = at + 1; it != parts.end(); ++it) out += (out.empty() ? "'" : std::string(kSep) + "'") + *it + "'";
  return out;
}

std::string WebshopEnv::simple_observation() const {
  const std::string& instr = goal_ ? goal_->instruction_text : std::string();
  std::vector<std::string> t;
  switch (page_) {
    case Page::kSearch:
      return join_texts({"WebShop", "Instruction: ", instr, "Search"});
    case Page::kResults: {
      t = {"Instruction:", instr, "Back to Search",
           "Page " + std::to_string(results_page_) + " (Total results: " + std::to_string(results_.size()) + ")"};
      if (results_page_ > 1) t.push_back("< Prev");
      t.push_back("Next >");
      const size_t begin = static_cast<size_t>(results_page_ - 1) * kProductsPerPage;
      for (size_t i = begin; i < std::min(results_.size(), begin + kProductsPerPage); ++i) {
        t.push_back(results_[i]->asin);
        t.push_back(results_[i]->title);
        t.push_back(results_[i]->price_tag);
      }
      return join_texts(t);
    }
    case Page::kItem: {
      t = {"Instruction:", instr, "Back to Search", "< Prev"};
      for (const auto& [name, values] : item_->options) {
        t.push_back(name);
        for (const auto& v : values) t.push_back(v);
      }
      t.push_back(item_->title);
      t.push_back("Price: " + item_->price_tag);
      t.push_back("Rating: " + item_->rating);
      for (const char* b : {"Description", "Features", "Reviews", "Buy Now"}) t.push_back(b);
      return join_texts(t);
    }
    case Page::kDescription:
      return join_texts({"Instruction:", instr, "Back to Search", "< Prev", item_->description});
    case Page::kFeatures:
      t = {"Instruction:", instr, "Back to Search", "< Prev"};
      for (const auto& b : item_->bullet_points) t.push_back(b);
      return join_texts(t);
    case Page::kReviews:
      return join_texts({"Instruction:", instr, "Back to Search", "< Prev"});
    case Page::kDone: {
      // done_page.html as the text env renders it (only reward, asin and
      // options are passed; the other fields render as None or empty).
      t = {"Thank you for shopping with us!", "Your code: ", "None", " (Paste it in your MTurk interface.)",
           "Purchased", "asin", item_ ? item_->asin : "", "options", flask_tojson(options_), "attrs", "None",
           "category", "None", "query", "None", "product category", "None", "Target", "asin", "options", "attrs",
           "price upper", "instuction text", "category", "product category", "query", "Goal", "None", "Reward",
           "Your score (min 0.0, max 1.0)", python_float_repr(reward_), "Reward Details", "None"};
      return join_texts(t);
    }
  }
  return "";
}

void WebshopEnv::Clickables::add(const std::string& text, Clickable c) {
  // A Python dict: a later entry overrides the value, the key keeps its place.
  if (by_text.insert_or_assign(text, std::move(c)).second) order.push_back(text);
}

WebshopEnv::Clickables WebshopEnv::clickables() const {
  // get_available_actions: buttons and product links by lowercased text,
  // then radio options by value (a later entry overrides an earlier one), in
  // the page's document order.
  Clickables c;
  auto button = [&](const char* text) { c.add(lower(text), {Clickable::kButton, ""}); };
  switch (page_) {
    case Page::kSearch:
      button("Search");
      break;
    case Page::kResults: {
      button("Back to Search");
      if (results_page_ > 1) button("< Prev");
      button("Next >");
      const size_t begin = static_cast<size_t>(results_page_ - 1) * kProductsPerPage;
      for (size_t i = begin; i < std::min(results_.size(), begin + kProductsPerPage); ++i)
        c.add(lower(results_[i]->asin), {Clickable::kProductLink, ""});
      break;
    }
    case Page::kItem:
      for (const char* b : {"Back to Search", "< Prev", "Description", "Features", "Reviews", "Buy Now"}) button(b);
      for (const auto& [name, values] : item_->options)
        for (const auto& v : values) c.add(v, {Clickable::kOption, name});
      break;
    case Page::kDescription:
    case Page::kFeatures:
    case Page::kReviews:
      button("Back to Search");
      button("< Prev");
      break;
    case Page::kDone:
      break;
  }
  return c;
}

std::string WebshopEnv::clicked_asin(const std::string& asin) const {
  // The store's ASINs are upper case (step() looks a click up by upper()),
  // so upper() gives the ASIN as the results page shows it.
  return data_->asin_case == "page" ? upper(asin) : lower(asin);
}

std::string WebshopEnv::shown_click_text(const std::string& text, const Clickable& c) const {
  // Product links are keyed by the lowercased ASIN.
  return c.kind == Clickable::kProductLink ? clicked_asin(text) : text;
}

bool WebshopEnv::admissible_actions_exhaustive() const { return done_ || !goal_ || page_ != Page::kSearch; }

std::vector<std::string> WebshopEnv::admissible_actions() const {
  std::vector<std::string> out;
  if (done_ || !goal_) return out;
  if (data_->admissible_format == "verl-agent") {
    // verl-agent's format_avail_actions: the search bar first, then every
    // clickable in page order, the search button included.
    if (page_ == Page::kSearch) out.push_back("search[<your query>]");
    const Clickables c = clickables();
    for (const auto& text : c.order) out.push_back("click[" + shown_click_text(text, c.by_text.at(text)) + "]");
    return out;
  }
  if (page_ == Page::kSearch) out.push_back("search[<query>]");
  for (const auto& [text, c] : clickables().by_text)
    if (text != "search") out.push_back("click[" + shown_click_text(text, c) + "]");
  std::sort(out.begin(), out.end());
  return out;
}

void WebshopEnv::go_search_results(const std::string& keywords, int page) {
  if (keywords != keywords_ || results_.empty()) results_ = data_->search(keywords);
  keywords_ = keywords;
  results_page_ = page;
  item_ = nullptr;
  options_.clear();  // search_results resets session["asin"] and ["options"]
  page_ = Page::kResults;
}

StepResult WebshopEnv::buy() {
  std::vector<std::string> chosen;
  for (const auto& [name, value] : options_) chosen.push_back(value);
  RewardInfo info = get_reward(*item_, *goal_, data_->prices.at(item_->asin), chosen);
  reward_ = info.total;
  done_ = true;
  page_ = Page::kDone;
  StepResult r;
  r.reward = info.total;
  r.done = true;
  r.info.score = info.total;
  r.info.success = info.total == 1.0;
  r.info.metrics = {{"r_type", info.type.r_type},
                    {"r_att", info.r_att},
                    {"r_price", info.r_price ? 1.0 : 0.0},
                    {"title_score", info.type.title_score},
                    {"query_match", info.type.query_match ? 1.0 : 0.0},
                    {"category_match", info.type.category_match ? 1.0 : 0.0},
                    {"target_asin", item_->asin == goal_->asin ? 1.0 : 0.0}};
  if (info.has_r_option) r.info.metrics["r_option"] = info.r_option;
  return r;
}

StepResult WebshopEnv::step(const std::string& action) {
  StepResult r;
  if (!goal_) throw std::logic_error("WebshopEnv::step before reset");
  r.info.task_type = goal_->category;
  if (done_) {
    r.observation = observation();
    r.done = true;
    r.info.invalid_action = true;
    return r;
  }
  ++steps_;
  auto [name, arg] = parse_action(action);
  if (arg) *arg = lower(*arg);
  const auto clicks = clickables().by_text;
  bool valid = true;
  if (name == "search" && arg && !arg->empty()) {
    go_search_results(*arg, 1);
  } else if (name == "click" && arg && clicks.count(*arg) && *arg != "search") {
    const std::string& x = *arg;
    if (x == "buy now") {
      StepResult b = buy();
      b.observation = observation();
      b.info.task_type = goal_->category;
      return b;
    } else if (x == "back to search") {
      page_ = Page::kSearch;
      keywords_.clear();
      results_.clear();
      item_ = nullptr;
      options_.clear();
    } else if (x == "next >" && page_ == Page::kResults) {
      go_search_results(keywords_, results_page_ + 1);
    } else if (x == "< prev" && page_ == Page::kResults) {
      go_search_results(keywords_, results_page_ - 1);
    } else if (x == "< prev" && (page_ == Page::kDescription || page_ == Page::kFeatures || page_ == Page::kReviews)) {
      page_ = Page::kItem;
    } else if (x == "< prev" && page_ == Page::kItem) {
      go_search_results(keywords_, results_page_);
    } else if (x == "description") {
      page_ = Page::kDescription;
    } else if (x == "features") {
      page_ = Page::kFeatures;
    } else if (x == "reviews") {
      page_ = Page::kReviews;
    } else {
      const Clickable& c = clicks.at(x);
      if (c.kind == Clickable::kProductLink) {
        item_ = data_->store.find(upper(x));
        page_ = Page::kItem;
      } else if (c.kind == Clickable::kOption) {
        auto it = std::find_if(options_.begin(), options_.end(), [&](const auto& o) { return o.first == c.option_name; });
        if (it == options_.end())
          options_.emplace_back(c.option_name, x);
        else
          it->second = x;
        page_ = Page::kItem;
      }
    }
  } else {
    valid = false;
  }
  r.observation = observation();
  r.info.invalid_action = !valid;
  if (steps_ >= data_->max_steps) {
    // Out of steps without buying: WebShop's reward for no purchase is 0.
    done_ = true;
    r.done = true;
    r.info.metrics["truncated"] = 1.0;
  }
  return r;
}

// ------------------------------------------------------------ expert

std::optional<std::string> WebshopEnv::expert_action() {
  if (done_ || !goal_) return std::nullopt;
  const Product* target = data_->store.find(goal_->asin);
  if (!target) return std::nullopt;
  // First query: the instruction without its option and price clauses (what
  // a shopper types); fall back to the target's title when the target is
  // not in the top 50.
  std::string query = goal_->instruction_text;
  for (const char* cut : {" with ", ", and price lower than"}) {
    size_t pos = query.find(cut);
    if (pos != std::string::npos) query = query.substr(0, pos);
  }
  query = lower(query);
  const std::string title_query = lower(target->title);
  switch (page_) {
    case Page::kSearch:
      return "search[" + query + "]";
    case Page::kResults: {
      auto it = std::find(results_.begin(), results_.end(), target);
      if (it == results_.end()) {
        if (keywords_ != title_query) return "search[" + title_query + "]";
        return std::nullopt;
      }
      const int want = static_cast<int>((it - results_.begin()) / kProductsPerPage) + 1;
      if (want == results_page_)
        return "click[" + clicked_asin(target->asin) + "]";
      return want > results_page_ ? "click[next >]" : "click[< prev]";
    }
    case Page::kItem: {
      if (item_ != target) return "click[< prev]";
      const auto clicks = clickables().by_text;
      for (const auto& o : goal_->goal_options) {
        auto c = clicks.find(o.value);
        if (c == clicks.end() || c->second.kind != Clickable::kOption) continue;
        if (goal_->options_are_dict && c->second.option_name != o.name) continue;
        const bool chosen = std::any_of(options_.begin(), options_.end(), [&](const auto& s) {
          return s.first == c->second.option_name && s.second == o.value;
        });
        if (!chosen) return "click[" + o.value + "]";
      }
      return "click[buy now]";
    }
    case Page::kDescription:
    case Page::kFeatures:
    case Page::kReviews:
      return "click[< prev]";
    case Page::kDone:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace agentrl::envs::webshop
