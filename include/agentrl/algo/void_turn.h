// Generic void-turn predicates of SimpleTIR (Xue et al. 2025, arXiv
// 2509.02479, sec. 3.3): a turn is void when the model's response contains
// neither a complete code block nor a final answer. An env that uses fenced
// code and \boxed{} answers (the code-tool env) can use these directly; the
// env owns the decision and sets Turn::void_turn at rollout time.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

namespace agentrl::algo {

// True when `text` contains a fenced code block "```<language>" ... "```"
// whose closing fence exists (language empty = any fence). A fence left open
// (generation stopped early) does not count.
bool has_complete_code_block(const std::string& text, const std::string& language = "python");

// True when `text` contains a final-answer marker ("\boxed{" by default)
// whose braces are closed.
bool has_final_answer(const std::string& text, const std::string& marker = "\\boxed{");

// SimpleTIR void turn: neither a complete code block in the response nor a
// final answer in the response or in its execution output.
bool is_void_turn(const std::string& response, const std::string& tool_output, const std::string& language = "python");

}  // namespace agentrl::algo
