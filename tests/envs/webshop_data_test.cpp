// WebShop data loaders, cleaning rules, goals and split order, on small
// hand-written files in WebShop's real schema and (when present) on the
// real data in ../shared/data/webshop.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "agentrl/core/error.h"
#include "agentrl/envs/webshop/goals.h"
#include "agentrl/envs/webshop/python_random.h"
#include "agentrl/envs/webshop/reward.h"
#include "shared_data.h"

namespace fs = std::filesystem;
using namespace agentrl::envs::webshop;

namespace {
class WebshopDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("agentrl_wsdata_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  fs::path dir_;
};

const char* kRawRecord = R"({
  "name": "Trail Runner Shoes",
  "full_description": "Great shoes.",
  "pricing": "$10.99 - $15.99",
  "images": ["https://img/1.jpg", "https://img/2.jpg"],
  "product_category": "Clothing, Shoes & Jewelry \u203a Men \u203a Shoes",
  "average_rating": 4.4,
  "small_description": "Rubber sole",
  "customization_options": {"Color": [{"value": "Black/White", "image": "x"}, {"value": " Navy "}],
                            "Size": [{"value": "X-Large", "image": null}]},
  "asin": "B0TRAIL001",
  "category": "fashion",
  "query": " Men's Shoes ",
  "page": 3,
  "brand": "dropped", "list_price": "dropped"
})";

std::string data_dir() { return std::string(AGENTRL_SHARED_DATA_DIR) + "/webshop"; }
}  // namespace

TEST(WebshopFormat, PythonFloatReprMatchesCPython) {
  EXPECT_EQ(python_float_repr(12.99), "12.99");
  EXPECT_EQ(python_float_repr(100.0), "100.0");
  EXPECT_EQ(python_float_repr(123456789.0), "123456789.0");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(0.00001), "1e-05");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(0.1 + 0.2), "0.30000000000000004");
}

TEST(WebshopFormat, ParsePricingKeepsDigitsAndDotsOfEachDollarPiece) {
  EXPECT_EQ(parse_pricing("$10.99 - $15.99"), (std::vector<double>{10.99, 15.99}));
  EXPECT_EQ(parse_pricing("$1,299.00"), (std::vector<double>{1299.0}));
  EXPECT_EQ(price_tag({10.99, 15.0}), "$10.99 to $15.0");
  EXPECT_THROW(parse_pricing("$ - $3"), std::invalid_argument);
}

TEST_F(WebshopDataTest, LoadsRawRecordWithWebShopCleaning) {
  auto path = write("items.json", std::string("[") + kRawRecord + "]");
  ProductStore s = load_products_file(path, 0, {});
  ASSERT_EQ(s.size(), 1u);
  const Product& p = s.at(0);
  EXPECT_EQ(p.asin, "B0TRAIL001");
  EXPECT_EQ(p.title, "Trail Runner Shoes");
  EXPECT_EQ(p.query, "men's shoes");
  EXPECT_EQ(p.bullet_points, (std::vector<std::string>{"Rubber sole"}));
  EXPECT_EQ(p.pricing, (std::vector<double>{10.99, 15.99}));
  EXPECT_EQ(p.price_tag, "$10.99 to $15.99");
  ASSERT_EQ(p.options.size(), 2u);
  EXPECT_EQ(p.options[0].first, "color");
  EXPECT_EQ(p.options[0].second, (std::vector<std::string>{"black | white", "navy"}));
  EXPECT_EQ(p.options[1].first, "size");
  EXPECT_EQ(p.options[1].second, (std::vector<std::string>{"x-large"}));
  EXPECT_EQ(p.attributes, (std::vector<std::string>{"DUMMY_ATTR"}));
  EXPECT_EQ(p.main_image, "https://img/1.jpg");
  EXPECT_EQ(index_text(p), "trail runner shoes great shoes. rubber sole color: black | white, navy, and size: x-large");
}

TEST_F(WebshopDataTest, SkipsNanLongAndDuplicateAsinsAndHonoursLimit) {
  auto path = write("items.json", R"([
    {"asin": "nan", "name": "a"},
    {"asin": "B0TOOLONG123", "name": "b"},
    {"asin": "B000000003", "name": "c"},
    {"asin": "B000000003", "name": "c again"},
    {"asin": "B000000005", "name": "e"},
    {"asin": "B000000006", "name": "f"}])");
  ProductStore all = load_products_file(path, 0, {});
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all.at(0).title, "c");
  EXPECT_EQ(all.at(0).pricing, (std::vector<double>{100.0}));  // missing pricing
  EXPECT_EQ(all.at(0).price_tag, "$100.0");
  EXPECT_EQ(load_products_file(path, 5, {}).size(), 2u);  // only the first 5 records
}

TEST_F(WebshopDataTest, AttributesComeFromAttributeFile) {
  auto items = write("items.json", R"([{"asin": "B000000001", "name": "x"}, {"asin": "B000000002", "name": "y"}])");
  auto attrs = write("ins.json", R"({"B000000001": {"attributes": ["long lasting"], "instruction": "Find me x",
                                     "instruction_attributes": ["long lasting"]}, "B000000002": {"attributes": []}})");
  AnnotationMap ann;
  load_attribute_file(attrs, ann);
  ProductStore s = load_products_file(items, 0, ann);
  EXPECT_EQ(s.at(0).attributes, (std::vector<std::string>{"long lasting"}));
  EXPECT_TRUE(s.at(1).attributes.empty());  // present but empty: kept empty, not DUMMY_ATTR
}

TEST_F(WebshopDataTest, MalformedJsonIsFormatErrorNamingFile) {
  auto path = write("broken.json", "[{\"asin\": ");
  try {
    load_products_file(path, 0, {});
    FAIL();
  } catch (const agentrl::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.json"), std::string::npos) << e.what();
  }
}

TEST_F(WebshopDataTest, RecordWithoutAsinIsFormatErrorNamingRecord) {
  auto path = write("items.json", R"([{"asin": "B000000001", "name": "ok"}, {"name": "no asin"}])");
  try {
    load_products_file(path, 0, {});
    FAIL();
  } catch (const agentrl::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("record 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'asin'"), std::string::npos) << e.what();
  }
}

TEST_F(WebshopDataTest, UnparseablePriceIsFormatErrorNamingAsin) {
  auto path = write("items.json", R"([{"asin": "B000000001", "name": "x", "pricing": "$abc"}])");
  try {
    load_products_file(path, 0, {});
    FAIL();
  } catch (const agentrl::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("B000000001"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("pricing"), std::string::npos) << e.what();
  }
}

TEST_F(WebshopDataTest, WrongTopLevelTypeIsFormatError) {
  EXPECT_THROW(load_products_file(write("o.json", "{}"), 0, {}), agentrl::FormatError);
  AnnotationMap ann;
  EXPECT_THROW(load_human_instruction_file(write("h.json", "[]"), ann), agentrl::FormatError);
  EXPECT_THROW(load_attribute_file(write("a.json", R"({"B1": 3})"), ann), agentrl::FormatError);
}

TEST_F(WebshopDataTest, MissingFileIsIoError) {
  EXPECT_THROW(load_products_file((dir_ / "absent.json").string(), 0, {}), agentrl::IoError);
}

TEST_F(WebshopDataTest, HumanGoalsFollowGetHumanGoals) {
  auto items = write("items.json", R"([{"asin": "B000000001", "name": "Protein Shake", "pricing": "$11.07",
                                        "query": "Beverages", "product_category": "A \u203a B"}])");
  auto human = write("human.json", R"({"B000000001": [
      {"instruction": "i want a soy free shake.", "instruction_attributes": ["soy free"], "instruction_options": ["12 pack"]},
      {"instruction": "skipped: no attributes", "instruction_attributes": [], "instruction_options": []}]})");
  AnnotationMap ann;
  load_human_instruction_file(human, ann);
  ProductStore s = load_products_file(items, 0, ann);
  PyRandom rng(1);
  auto prices = product_prices(s, rng);
  auto goals = human_goals(s, ann, prices, rng);
  ASSERT_EQ(goals.size(), 1u);
  const Goal& g = goals[0];
  // price 11.07 -> PRICE_RANGE candidates [20, 30, 40, 50]; the upper bound
  // is the larger of two distinct draws, so at least 30.
  EXPECT_GE(g.price_upper, 30.0);
  EXPECT_LE(g.price_upper, 50.0);
  char expected[128];
  std::snprintf(expected, sizeof expected, "i want a soy free shake, and price lower than %.2f dollars", g.price_upper);
  EXPECT_EQ(g.instruction_text, expected);
  EXPECT_FALSE(g.options_are_dict);
  ASSERT_EQ(g.goal_options.size(), 1u);
  EXPECT_EQ(g.goal_options[0].value, "12 pack");
  EXPECT_EQ(g.query, "beverages");
}

TEST_F(WebshopDataTest, SyntheticGoalsEnumerateOptionCombinationsInSortedNameOrder) {
  auto items = write("items.json", R"([{"asin": "B000000001", "name": "Tee", "pricing": "$995.00",
      "customization_options": {"Size": [{"value": "S"}, {"value": "M"}], "Color": [{"value": "Red"}]}}])");
  auto attrs = write("ins.json", R"({"B000000001": {"attributes": ["cotton"], "instruction": "Find me a tee",
                                     "instruction_attributes": ["cotton"]}})");
  AnnotationMap ann;
  load_attribute_file(attrs, ann);
  ProductStore s = load_products_file(items, 0, ann);
  PyRandom rng(1);
  auto goals = synthetic_goals(s, ann, product_prices(s, rng), rng);
  ASSERT_EQ(goals.size(), 2u);
  // 995 > every PRICE_RANGE value but none: fewer than 2 candidates -> no price clause.
  EXPECT_EQ(goals[0].instruction_text, "Find me a tee with color: red, and size: s");
  EXPECT_EQ(goals[1].instruction_text, "Find me a tee with color: red, and size: m");
  EXPECT_DOUBLE_EQ(goals[0].price_upper, 1000000.0);
  EXPECT_TRUE(goals[0].options_are_dict);
  EXPECT_DOUBLE_EQ(goals[0].weight, 0.5);  // 1 / cnt('cotton') = 1/2
}

TEST(WebshopSplit, GoalShuffleIsPythonSeed233Shuffle) {
  std::vector<Goal> goals(20);
  for (size_t i = 0; i < goals.size(); ++i) goals[i].asin = std::to_string(i);
  webshop_goal_shuffle(goals);
  // python3 -c 'import random; x=list(range(20)); random.seed(233); random.shuffle(x); print(x)'
  const std::vector<int> expected = {17, 18, 9, 2, 8, 19, 11, 10, 12, 0, 3, 4, 14, 13, 1, 6, 15, 7, 16, 5};
  for (size_t i = 0; i < goals.size(); ++i) EXPECT_EQ(goals[i].asin, std::to_string(expected[i]));
}

// --- real data ----------------------------------------------------------

TEST(WebshopRealData, IndexTextReproducesPyseriniDocumentContents) {
  const std::string path = data_dir() + "/resources_100_documents.jsonl";
  REQUIRE_SHARED_DATA(path);
  ProductStore s = load_products_jsonl(path, {});
  ASSERT_EQ(s.size(), 100u);
  std::ifstream in(path);
  std::string line;
  size_t checked = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    const Product* p = s.find(j["id"].get<std::string>());
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(index_text(*p), j["contents"].get<std::string>()) << p->asin;
    ++checked;
  }
  EXPECT_EQ(checked, 100u);
}

TEST(WebshopRealData, HumanInstructionRecordBecomesGoal) {
  const std::string prod = data_dir() + "/product_B07FYPSNH8.json";
  const std::string human = data_dir() + "/items_human_ins_record_B07FYPSNH8.json";
  REQUIRE_SHARED_DATA(prod);
  REQUIRE_SHARED_DATA(human);
  const std::string tmp = (fs::temp_directory_path() / ("agentrl_ws_prod_" + std::to_string(::getpid()) + ".json")).string();
  {
    std::ifstream in(prod);
    std::ofstream out(tmp);
    out << "[" << in.rdbuf() << "]";
  }
  AnnotationMap ann;
  load_human_instruction_file(human, ann);
  ProductStore s = load_products_file(tmp, 0, ann);
  fs::remove(tmp);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s.at(0).price_tag, "$11.07");
  PyRandom rng(3);
  auto goals = human_goals(s, ann, product_prices(s, rng), rng);
  ASSERT_EQ(goals.size(), 1u);
  EXPECT_EQ(goals[0].instruction_text.rfind(
                "i am looking for a gluten free, 100% vegan plant based protein shake that is soy-free, and price lower than ", 0),
            0u)
      << goals[0].instruction_text;
  // Buying the goal's own product with no options: r_att 1 ('gluten free'
  // is among its Attributes), no goal options, price OK, same query -> 1.
  auto info = get_reward(s.at(0), goals[0], 11.07, {});
  EXPECT_DOUBLE_EQ(info.total, 1.0);
}

// WebShop's own human sessions (human_trajs/: 50 purchases with the reward and
// its parts that WebShop's server recorded). None of the purchased products is
// in the local 100-product sample, so the parts that read the product's text
// (attribute matches, title-noun overlap) are taken from the record; every
// other step of get_reward runs here on the session's goal and purchase: the
// r_type rule, the option matching (colour normalisation + token_set_ratio),
// the price check and the weighted total.
Goal goal_from_record(const nlohmann::json& jg) {
  Goal g;
  g.query = jg["query"];
  g.product_category = jg["product_category"];
  g.name = jg["name"];
  g.attributes = jg["attributes"].get<std::vector<std::string>>();
  g.price_upper = jg["price_upper"];
  g.options_are_dict = jg["goal_options"].is_object();
  if (g.options_are_dict)
    for (auto it = jg["goal_options"].begin(); it != jg["goal_options"].end(); ++it)
      g.goal_options.push_back({it.key(), it.value()});
  else
    for (const auto& v : jg["goal_options"]) g.goal_options.push_back({"", v});
  return g;
}

void replay_purchase(const nlohmann::json& done, const std::string& where) {
  const Goal g = goal_from_record(done["goal"]);
  const auto& rec = done["reward_info"];
  RewardInfo info;
  info.type.r_type = type_score(rec["query_match"], rec["category_match"], rec["title_score"]);
  EXPECT_EQ(info.type.r_type, rec["r_type"].get<double>()) << where;
  std::vector<std::string> chosen;
  for (auto it = done["content"]["options"].begin(); it != done["content"]["options"].end(); ++it)
    chosen.push_back(it.value());
  OptionReward o = option_reward(chosen, g.goal_options, g.options_are_dict);
  EXPECT_EQ(o.defined, rec.contains("r_option")) << where;
  if (rec.contains("r_option")) {
    EXPECT_DOUBLE_EQ(o.r_option, rec["r_option"].get<double>()) << where;
  }
  info.num_option_matches = o.matches;
  info.r_price = done["content"]["price"].get<double>() <= g.price_upper;
  EXPECT_EQ(info.r_price, rec["r_price"].get<bool>()) << where;
  info.num_attr_matches = static_cast<int>(std::lround(rec["r_att"].get<double>() * g.attributes.size()));
  combine_reward(g, info);
  EXPECT_NEAR(info.total, done["reward"].get<double>(), 1e-9) << where;
}

TEST(WebshopRealData, HumanSessionsReplayToRecordedRewards) {
  const std::string trajs = data_dir() + "/human_trajs";
  REQUIRE_SHARED_DATA(trajs);
  size_t sessions = 0, with_options = 0, nonzero = 0;
  for (const auto& f : fs::directory_iterator(trajs)) {
    std::ifstream in(f.path());
    std::string line;
    for (int lineno = 1; std::getline(in, line); ++lineno) {
      auto j = nlohmann::json::parse(line);
      if (j.value("page", "") != "done") continue;
      replay_purchase(j, f.path().string() + ":" + std::to_string(lineno));
      ++sessions;
      with_options += j["reward_info"].contains("r_option");
      nonzero += j["reward"].get<double>() > 0;
    }
  }
  EXPECT_EQ(sessions, 50u);  // every session of the folder ends in a purchase
  EXPECT_GT(with_options, 10u);
  EXPECT_GT(nonzero, 10u);
}

TEST(WebshopRealData, AttributeFileLoadsInstructionsOfRealSample) {
  const std::string path = data_dir() + "/items_ins_v2_1000.json";
  REQUIRE_SHARED_DATA(path);
  AnnotationMap ann;
  load_attribute_file(path, ann);
  ASSERT_TRUE(ann.count("B07DJJXGB5"));
  const auto& a = ann.at("B07DJJXGB5");
  EXPECT_EQ(a.attributes, (std::vector<std::string>{"tea tree", "essential oils", "natural ingredients"}));
  EXPECT_TRUE(a.has_instruction);
  EXPECT_EQ(a.instruction, "Find me scrubs & body treatments with tea tree, natural ingredients");
  EXPECT_EQ(a.instruction_attributes, (std::vector<std::string>{"tea tree", "natural ingredients"}));
  EXPECT_FALSE(ann.at("B08GFNJN5R").has_instruction);  // attributes only
}
