// A generated fictional world for the Deep Search env.
//
// People, cities, organisations and works with invented names (built from
// syllables, so the facts exist in no pre-training corpus) and typed
// relations:
//   person  --born_in-->      city
//   person  --works_for-->    organisation
//   org     --founded_by-->   person
//   org     --based_in-->     city
//   work    --written_by-->   person
// Every entity is rendered as one wiki-18 style passage ("\"Name\"\n...")
// stating its facts in prose. Questions follow relation chains of 1 to 3
// hops ("Who founded the organisation that employs X?"), so answering needs
// one search per hop; each question records its chain (entity, relation,
// next entity), which the scripted expert follows.
//
// Deterministic: the same WorldOptions give the same world. Questions are
// split into train/dev/test by a seeded shuffle.
//
// Thread-safety: a World is immutable after generate().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agentrl/envs/deepsearch/qa.h"

namespace agentrl::envs::deepsearch {

struct WorldOptions {
  uint64_t seed = 17;
  int64_t people = 1500;
  int64_t cities = 120;
  int64_t organisations = 250;
  int64_t works = 600;
  int64_t questions = 5000;  // split 80/10/10 into train/dev/test
};

struct Hop {
  std::string entity;    // the entity to look up in this hop
  std::string relation;  // "born_in", "works_for", ...
  std::string result;    // the entity the relation leads to
};

struct WorldQuestion {
  QaItem qa;              // qa.type = "1-hop" / "2-hop" / "3-hop"
  std::vector<Hop> chain;
};

struct World {
  std::vector<Passage> passages;
  std::vector<WorldQuestion> train, dev, test;

  static World generate(const WorldOptions& options);
  const std::vector<WorldQuestion>& split(const std::string& name) const;  // ConfigError if unknown
};

// Words of a search query that the expert issues for a hop ("<entity>
// <relation words>").
std::string hop_query(const Hop& hop);

}  // namespace agentrl::envs::deepsearch
