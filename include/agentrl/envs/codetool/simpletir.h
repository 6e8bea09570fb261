// SimpleTIR's turn protocol, piece by piece, as its original defines it
// (ltzheng/SimpleTIR at e7b5b44: recipe/simpletir/agent_utils.py, the
// `math` reward manager with utils/reward_score/hf_math_verify.py and the
// Qwen2.5-Math evaluation toolkit's extract_answer). The code-tool env's
// `protocol: simpletir` (codetool_env.h) is built from these.
//
//   turn end     the first complete code block: ```, an optional "py" or
//                "python" tag, a newline, the code, a newline, ``` — the
//                original drops everything the model wrote after it; here
//                generation stops there (kCodeBlockPattern as the stop regex)
//   code         that block's body, whitespace-stripped
//   answer?      the response contains "\boxed{" (braces need not close)
//   output       stdout non-empty: "\nCode execution result: {stdout}\n";
//                stderr non-empty (wins): the same with stderr's last line;
//                both empty: "" (nothing is spliced in). Each text is cut
//                to 512 characters: the first 256, the marker
//                "\n..._This content has been truncated to stay below 512
//                characters_...\n", the last 256 (characters = code points)
//   grade        the whole episode text (responses and spliced outputs) cut
//                at the first stop word (</s>, <|im_end|>, <|endoftext|>,
//                [END]); the toolkit's extraction (after the last "boxed":
//                the brace group, or up to "$"; else after "he answer is" /
//                "final answer is" / "答案是"; else the last number) and its
//                clean-up; the caller compares it with the gold answer.
//
// Thread-safety: pure functions.
//
// This layer is torch-free.
#pragma once

#include <optional>
#include <string>

#include "agentrl/envs/codetool/sandbox.h"

namespace agentrl::envs::codetool::simpletir {

// agent_utils.py's code-block regex (first match; DOTALL).
inline constexpr const char* kCodeBlockPattern = "(?s)```(?:py|python)?\\n(.*?)\\n```";

// The stripped body of the first complete code block, or nullopt.
std::optional<std::string> first_code_block(const std::string& response);
// "\boxed{" anywhere in the text: the original's test for a final answer.
bool has_answer(const std::string& text);
// truncate_content(text, max_chars): head + marker + tail, in code points.
std::string truncate(const std::string& text, size_t max_chars = 512);
// The text spliced after an executed block (see above; "" when silent).
std::string execution_output(const ExecResult& r);
// The answer the original's grader extracts from an episode's text ("" when
// none); compare it with AnswerChecker::equivalent.
std::string extract_answer(const std::string& episode_text);

}  // namespace agentrl::envs::codetool::simpletir
