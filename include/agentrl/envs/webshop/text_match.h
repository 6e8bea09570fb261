// String matching used by WebShop's reward (web_agent_site/engine/goal.py).
//
// WebShop scores attributes and options with thefuzz 0.19 (= fuzzywuzzy
// 0.18) `fuzz.token_set_ratio`, which, without python-Levenshtein installed
// (WebShop's requirements do not install it), is built on Python's
// difflib.SequenceMatcher (Ratcliff/Obershelp "gestalt" matching, with the
// autojunk heuristic for sequences of 200+ elements). This file reproduces
// both exactly, on Unicode code points, plus WebShop's colour normalisation
// (normalize.py) and a substitute for its spaCy noun tagger.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

namespace agentrl::envs::webshop {

// UTF-8 <-> code points (invalid bytes decode as U+FFFD).
std::u32string utf8_to_u32(const std::string& s);
std::string u32_to_utf8(const std::u32string& s);
// Python's str.lower() with the simple one-to-one Unicode mapping.
std::string unicode_lower(const std::string& s);

// difflib.SequenceMatcher(None, a, b).ratio() with autojunk=True:
// 2 * M / (len(a) + len(b)), M = total size of the matching blocks; 1.0 when
// both are empty.
double sequence_matcher_ratio(const std::u32string& a, const std::u32string& b);

// fuzzywuzzy utils.full_process(s, force_ascii=True): drop code points
// 128..255, replace every non-word character (Python's Unicode \W; word =
// letter, number or '_') with a space, lowercase, strip.
std::u32string fuzz_full_process(const std::string& s);

// fuzzywuzzy fuzz.ratio on already processed strings: 100 if equal, 0 if
// either is empty, else round(100 * SequenceMatcher ratio) (Python's
// round-half-even).
int fuzz_ratio(const std::u32string& a, const std::u32string& b);

// fuzz.token_set_ratio(s1, s2) with force_ascii and full_process: the best
// ratio among (intersection, intersection + rest of s1, intersection + rest
// of s2) of the sorted token sets; 0 if either string processes to empty.
int token_set_ratio(const std::string& s1, const std::string& s2);

// WebShop's COLOR_SET (normalize.py), in its order.
const std::vector<std::string>& color_set();
// normalize.py normalize_color: the first COLOR_SET entry that is a
// substring of `s`, else `s` unchanged.
std::string normalize_color(const std::string& s);

// Substitute for goal.py's spaCy filter `t.pos_ in (NOUN, PROPN)` over
// en_core_web_sm tokens (spaCy is not available natively). Tokenises like
// spaCy on whitespace and punctuation (keeping inner '.' and '\'' as in
// "D.O.N." or "3.1"), lowercases, and keeps tokens that contain a letter
// and are neither function words (determiners, prepositions, conjunctions,
// pronouns, auxiliaries) nor common product-title adjectives (lexicon plus
// the suffixes -able/-ible/-ful/-ous/-ive/-less/-ish and past participles
// in -ed). Returns the kept tokens in order, duplicates included (goal.py
// divides by the length of this list).
// Deviation: spaCy's statistical tagger decides case by case (e.g. "White"
// may be PROPN in one title and ADJ in another); this rule-based filter
// agrees with it on WebShop's get_reward unit-test inputs but not on every
// title, so r_type may differ from WebShop's on borderline titles.
std::vector<std::string> title_nouns(const std::string& title);

}  // namespace agentrl::envs::webshop
