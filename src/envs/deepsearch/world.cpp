#include "agentrl/envs/deepsearch/world.h"

#include <functional>
#include <set>

#include "agentrl/core/error.h"
#include "agentrl/core/rng.h"

namespace agentrl::envs::deepsearch {
namespace {

const char* kOnsets[] = {"b", "br", "d", "dr", "f", "g", "k", "kr", "l", "m", "n", "p", "r", "s", "st",
                         "t", "th", "v", "z", "h", "j", "sh", "tr", "gl", "vr", "q"};
const char* kVowels[] = {"a", "e", "i", "o", "u", "ae", "ei", "ou", "ia", "y"};
const char* kCodas[] = {"", "", "", "n", "r", "l", "s", "th", "m", "x", "nd", "sk"};
const char* kCitySuffix[] = {"holm", "vale", "port", "ford", "mere", "stad", "wick", "burg", "haven", "moor"};
const char* kOrgKinds[] = {"Industries", "Institute", "Guild", "Foundry", "Company", "Trust", "Works", "Laboratories"};
const char* kOrgDesc[] = {"manufacturer", "research institute", "trading company", "publishing house",
                          "shipping firm", "engineering firm", "bank", "textile mill"};
const char* kWorkKinds[] = {"Chronicle", "Sonata", "Codex", "Saga", "Atlas", "Elegy", "Ballad", "Treatise"};
const char* kWorkDesc[] = {"novel", "symphony", "treatise", "epic poem", "atlas", "play", "memoir", "essay"};
const char* kJobs[] = {"chemist", "painter", "architect", "merchant", "astronomer", "poet", "engineer",
                       "physician", "composer", "cartographer", "historian", "sculptor"};

template <size_t N>
const char* pick(Rng& rng, const char* (&arr)[N]) {
  return arr[rng.uniform_int(0, static_cast<int64_t>(N) - 1)];
}

std::string capitalised(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

std::string word(Rng& rng, int syllables) {
  std::string w;
  for (int i = 0; i < syllables; ++i) w += std::string(pick(rng, kOnsets)) + pick(rng, kVowels);
  return capitalised(w + pick(rng, kCodas));
}

// Draws until the name is new, so every entity name is unique in the world.
std::string unique(std::set<std::string>& used, const std::function<std::string()>& make) {
  for (;;) {
    std::string n = make();
    if (used.insert(n).second) return n;
  }
}

struct Person {
  std::string name, job;
  int city = 0, org = 0, year = 0;
};
struct Org {
  std::string name, desc;
  int founder = 0, city = 0, year = 0;
};
struct Work {
  std::string name, desc;
  int author = 0, year = 0;
};

struct Entities {
  std::vector<std::string> cities;
  std::vector<Person> people;
  std::vector<Org> orgs;
  std::vector<Work> works;
};

// Entities and their relations, drawn from `rng`.
Entities make_entities(const WorldOptions& o, Rng& rng) {
  std::set<std::string> used;
  std::vector<std::string> cities(static_cast<size_t>(o.cities));
  for (auto& c : cities) c = unique(used, [&] { return word(rng, 1 + static_cast<int>(rng.uniform_int(0, 1))) + pick(rng, kCitySuffix); });
  std::vector<Person> people(static_cast<size_t>(o.people));
  std::vector<Org> orgs(static_cast<size_t>(o.organisations));
  std::vector<Work> works(static_cast<size_t>(o.works));
  auto rnd = [&](size_t n) { return static_cast<int>(rng.uniform_int(0, static_cast<int64_t>(n) - 1)); };
  for (auto& p : people) {
    p.name = unique(used, [&] { return word(rng, 2) + " " + word(rng, 2 + static_cast<int>(rng.uniform_int(0, 1))); });
    p.job = pick(rng, kJobs);
    p.city = rnd(cities.size());
    p.org = rnd(orgs.size());
    p.year = static_cast<int>(rng.uniform_int(1820, 1990));
  }
  for (auto& g : orgs) {
    g.name = unique(used, [&] { return word(rng, 2) + " " + pick(rng, kOrgKinds); });
    g.desc = pick(rng, kOrgDesc);
    g.founder = rnd(people.size());
    g.city = rnd(cities.size());
    g.year = static_cast<int>(rng.uniform_int(1800, 2000));
  }
  for (auto& w : works) {
    w.name = unique(used, [&] { return "The " + word(rng, 2) + " " + pick(rng, kWorkKinds); });
    w.desc = pick(rng, kWorkDesc);
    w.author = rnd(people.size());
    w.year = static_cast<int>(rng.uniform_int(1850, 2020));
  }
  return {std::move(cities), std::move(people), std::move(orgs), std::move(works)};
}

// One passage per entity, in prose; ids are "w<n>".
void render_passages(const Entities& e, World& world) {
  const auto& [cities, people, orgs, works] = e;
  auto add = [&](const std::string& title, const std::string& text) {
    world.passages.push_back({"w" + std::to_string(world.passages.size()), "\"" + title + "\"\n" + text});
  };
  std::vector<std::vector<int>> founded(people.size()), wrote(people.size());
  for (size_t i = 0; i < orgs.size(); ++i) founded[static_cast<size_t>(orgs[i].founder)].push_back(static_cast<int>(i));
  for (size_t i = 0; i < works.size(); ++i) wrote[static_cast<size_t>(works[i].author)].push_back(static_cast<int>(i));
  for (size_t i = 0; i < people.size(); ++i) {
    const Person& p = people[i];
    std::string last = p.name.substr(p.name.find(' ') + 1);
    std::string t = p.name + " is a " + p.job + " who was born in " + cities[static_cast<size_t>(p.city)] + " in " +
                    std::to_string(p.year) + ". " + last + " works for " + orgs[static_cast<size_t>(p.org)].name + ".";
    for (int g : founded[i]) t += " " + last + " is the founder of " + orgs[static_cast<size_t>(g)].name + ".";
    for (int w : wrote[i]) t += " " + last + " wrote " + works[static_cast<size_t>(w)].name + ".";
    add(p.name, t);
  }
  for (auto& g : orgs)
    add(g.name, g.name + " is a " + g.desc + " based in " + cities[static_cast<size_t>(g.city)] + ". It was founded by " +
                    people[static_cast<size_t>(g.founder)].name + " in " + std::to_string(g.year) + ".");
  for (auto& w : works)
    add(w.name, w.name + " is a " + w.desc + " written by " + people[static_cast<size_t>(w.author)].name +
                    ", published in " + std::to_string(w.year) + ".");
  for (size_t i = 0; i < cities.size(); ++i) {
    int residents = 0;
    for (auto& p : people) residents += p.city == static_cast<int>(i);
    add(cities[i], cities[i] + " is a city. " + std::to_string(residents) + " notable people were born there.");
  }
}

// A question along a random relation chain of 1 to 3 hops.
WorldQuestion make_question(const Entities& e, Rng& rng) {
  const auto& [cities, people, orgs, works] = e;
  auto rnd = [&](size_t n) { return static_cast<int>(rng.uniform_int(0, static_cast<int64_t>(n) - 1)); };
  auto person = [&](int i) { return people[static_cast<size_t>(i)].name; };
  auto city = [&](int i) { return cities[static_cast<size_t>(i)]; };
  WorldQuestion q;
  int tpl = static_cast<int>(rng.uniform_int(0, 12));
  const Person& p = people[static_cast<size_t>(rnd(people.size()))];
  const Org& g = orgs[static_cast<size_t>(rnd(orgs.size()))];
  const Work& w = works[static_cast<size_t>(rnd(works.size()))];
  const Person& author = people[static_cast<size_t>(w.author)];
  const Org& employer = orgs[static_cast<size_t>(p.org)];
  const Org& author_employer = orgs[static_cast<size_t>(author.org)];
  switch (tpl) {
    case 0: q.qa.question = "In which city was " + p.name + " born?"; q.chain = {{p.name, "born_in", city(p.city)}}; break;
    case 1: q.qa.question = "Which organisation does " + p.name + " work for?"; q.chain = {{p.name, "works_for", employer.name}}; break;
    case 2: q.qa.question = "Who founded " + g.name + "?"; q.chain = {{g.name, "founded_by", person(g.founder)}}; break;
    case 3: q.qa.question = "In which city is " + g.name + " based?"; q.chain = {{g.name, "based_in", city(g.city)}}; break;
    case 4: q.qa.question = "Who wrote " + w.name + "?"; q.chain = {{w.name, "written_by", author.name}}; break;
    case 5:
      q.qa.question = "Who founded the organisation that employs " + p.name + "?";
      q.chain = {{p.name, "works_for", employer.name}, {employer.name, "founded_by", person(employer.founder)}};
      break;
    case 6:
      q.qa.question = "In which city is the employer of " + p.name + " based?";
      q.chain = {{p.name, "works_for", employer.name}, {employer.name, "based_in", city(employer.city)}};
      break;
    case 7:
      q.qa.question = "In which city was the author of " + w.name + " born?";
      q.chain = {{w.name, "written_by", author.name}, {author.name, "born_in", city(author.city)}};
      break;
    case 8:
      q.qa.question = "Which organisation employs the author of " + w.name + "?";
      q.chain = {{w.name, "written_by", author.name}, {author.name, "works_for", author_employer.name}};
      break;
    case 9:
      q.qa.question = "In which city was the founder of " + g.name + " born?";
      q.chain = {{g.name, "founded_by", person(g.founder)},
                 {person(g.founder), "born_in", city(people[static_cast<size_t>(g.founder)].city)}};
      break;
    case 10:
      q.qa.question = "In which city was the founder of the organisation that employs " + p.name + " born?";
      q.chain = {{p.name, "works_for", employer.name},
                 {employer.name, "founded_by", person(employer.founder)},
                 {person(employer.founder), "born_in", city(people[static_cast<size_t>(employer.founder)].city)}};
      break;
    case 11:
      q.qa.question = "Who founded the organisation that employs the author of " + w.name + "?";
      q.chain = {{w.name, "written_by", author.name},
                 {author.name, "works_for", author_employer.name},
                 {author_employer.name, "founded_by", person(author_employer.founder)}};
      break;
    default:
      q.qa.question = "In which city is the employer of the author of " + w.name + " based?";
      q.chain = {{w.name, "written_by", author.name},
                 {author.name, "works_for", author_employer.name},
                 {author_employer.name, "based_in", city(author_employer.city)}};
      break;
  }
q.qa.golden_answers = {q.chain.back().result};
  q.qa.type = std::to_string(q.chain.size()) + "-hop";
  return q;
}


}  // namespace

std::string hop_query(const Hop& hop) {
  static const std::pair<const char*, const char*> words[] = {{"born_in", "born in"},
                                                              {"works_for", "works for"},
                                                              {"founded_by", "founded by"},
                                                              {"based_in", "based in"},
                                                              {"written_by", "written by"}};
  for (auto& [rel, w] : words)
    if (hop.relation == rel) return hop.entity + " " + w;
  return hop.entity;
}

const std::vector<WorldQuestion>& World::split(const std::string& name) const {
  if (name == "train") return train;
  if (name == "dev") return dev;
  if (name == "test") return test;
  throw ConfigError("deepsearch: unknown split '" + name + "' (expected train, dev or test)");
}

World World::generate(const WorldOptions& o) {
  Rng rng(o.seed);
  Entities e = make_entities(o, rng);
  World world;
  render_passages(e, world);
  std::vector<WorldQuestion> all;
  std::set<std::string> seen;  // the same question may be drawn twice
  for (int64_t guard = 0; static_cast<int64_t>(all.size()) < o.questions && guard < o.questions * 20; ++guard) {
    WorldQuestion q = make_question(e, rng);
    if (seen.insert(q.qa.question).second) all.push_back(std::move(q));
  }
  // Seeded Fisher-Yates, then 80/10/10.
  for (size_t i = all.size(); i > 1; --i) std::swap(all[i - 1], all[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(i) - 1))]);
  size_t n_train = all.size() * 8 / 10, n_dev = all.size() / 10;
  for (size_t i = 0; i < all.size(); ++i) {
    auto& dst = i < n_train ? world.train : (i < n_train + n_dev ? world.dev : world.test);
    all[i].qa.id = "world-" + std::string(i < n_train ? "train" : (i < n_train + n_dev ? "dev" : "test")) + "-" +
                   std::to_string(dst.size());
    dst.push_back(std::move(all[i]));
  }
  return world;
}

}  // namespace agentrl::envs::deepsearch
