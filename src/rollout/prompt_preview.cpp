#include "agentrl/rollout/prompt_preview.h"

#include <ostream>
#include <sstream>

namespace agentrl::rollout {
namespace {

void print_turn_outcome(const Turn& t, const text::Tokenizer& tok, std::ostream& out) {
  // The response as the model would have produced it (scripted_result
  // appends the chat template's end token, shown here as text).
  out << "--- response, " << t.generated_tokens.size() << " tokens ---\n"
      << tok.decode(t.generated_tokens) << "\n";
  out << "--- env: action \"" << t.action << "\", reward " << t.reward << (t.invalid_action ? ", invalid" : "")
      << (t.void_turn ? ", void turn" : "") << " ---\n";
}

}  // namespace

PreviewSummary preview_episode(EpisodeRunner& runner, const text::Tokenizer& tok,
                               const ScriptedResponses& responses, const PreviewOptions& options,
                               std::ostream& out) {
  PreviewSummary sum;
  auto req = runner.start();
  if (!req) out << "(the first prompt does not fit in rollout.max_context_tokens)\n";
  while (req) {
    const size_t step = runner.trajectory().turns.size();
    const Turn& turn = runner.trajectory().turns.back();
    const bool whole = step == 1 || runner.trajectory().context_mode == ContextMode::kWindow ||
                       options.whole_context;
    sum.prompt_tokens.push_back(static_cast<int64_t>(req->prompt.size()));
    out << "=== step " << step << ": ";
    if (whole) {
      out << "prompt, " << req->prompt.size() << " tokens ===\n" << tok.decode(req->prompt) << "\n";
    } else {
      out << "appended " << turn.context_tokens.size() << " tokens, context " << req->prompt.size()
          << " tokens ===\n" << tok.decode(turn.context_tokens) << "\n";
    }
    auto response = responses(runner.env());
    if (!response) {
      sum.out_of_responses = true;
      out << "(no more responses: the episode stops here)\n";
      break;
    }
    req = runner.on_generation(runner.scripted_result(*response));
    ++sum.steps;
    print_turn_outcome(runner.trajectory().turns[step - 1], tok, out);
  }
  const Trajectory& t = runner.trajectory();
  sum.success = t.success;
  sum.truncated = t.truncated;
  sum.reward = t.reward;
  out << "=== episode over: success=" << (t.success ? 1 : 0) << " steps=" << sum.steps << " reward=" << t.reward
      << (t.truncated ? " (truncated: turn or context limit)" : "") << " ===\n";
  return sum;
}

std::vector<std::string> split_responses(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  bool dotted = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    dotted |= line == ".";
    lines.push_back(line);
  }
  std::vector<std::string> out;
  if (!dotted) {
    for (const auto& l : lines)
      if (l.find_first_not_of(" \t") != std::string::npos) out.push_back(l);
    return out;
  }
  std::string cur;
  bool any = false;
  auto flush = [&] {
    while (!cur.empty() && cur.back() == '\n') cur.pop_back();
    if (any) out.push_back(cur);
    cur.clear();
    any = false;
  };
  for (const auto& l : lines) {
    if (l == ".") {
      flush();
      continue;
    }
    if (!any && l.find_first_not_of(" \t") == std::string::npos) continue;  // blank lines between responses
    cur += l + "\n";
    any = true;
  }
  flush();
  return out;
}

}  // namespace agentrl::rollout
