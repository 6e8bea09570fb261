#include "agentrl/envs/alfworld/game.h"

namespace agentrl::envs::alfworld {

const char* task_type_name(TaskType t) {
  switch (t) {
    case TaskType::kPick: return "pick_and_place_simple";
    case TaskType::kLook: return "look_at_obj_in_light";
    case TaskType::kClean: return "pick_clean_then_place_in_recep";
    case TaskType::kHeat: return "pick_heat_then_place_in_recep";
    case TaskType::kCool: return "pick_cool_then_place_in_recep";
    case TaskType::kPickTwo: return "pick_two_obj_and_place";
  }
  return "";
}

const char* task_type_short(TaskType t) {
  switch (t) {
    case TaskType::kPick: return "pick";
    case TaskType::kLook: return "look";
    case TaskType::kClean: return "clean";
    case TaskType::kHeat: return "heat";
    case TaskType::kCool: return "cool";
    case TaskType::kPickTwo: return "pick2";
  }
  return "";
}

bool parse_task_type(const std::string& s, TaskType* out) {
  for (int i = 0; i < kNumTaskTypes; ++i) {
    auto t = static_cast<TaskType>(i);
    if (s == task_type_name(t) || s == task_type_short(t)) {
      *out = t;
      return true;
    }
  }
  return false;
}

int Game::find_type(const std::string& name) const {
  for (size_t i = 0; i < type_names.size(); ++i)
    if (type_names[i] == name) return static_cast<int>(i);
  return -1;
}

const std::string& twl2_help_text() {
  // help.feedback of alfred.twl2 (ALFWorld 0.5.0), verbatim.
  static const std::string text =
      "\nAvailable commands:\n"
      "  look:                             look around your current location\n"
      "  inventory:                        check your current inventory\n"
      "  go to (receptacle):               move to a receptacle\n"
      "  open (receptacle):                open a receptacle\n"
      "  close (receptacle):               close a receptacle\n"
      "  take (object) from (receptacle):  take an object from a receptacle\n"
      "  move (object) to (receptacle):  place an object in or on a receptacle\n"
      "  examine (something):              examine a receptacle or an object\n"
      "  use (object):                     use an object\n"
      "  heat (object) with (receptacle):  heat an object using a receptacle\n"
      "  clean (object) with (receptacle): clean an object using a receptacle\n"
      "  cool (object) with (receptacle):  cool an object using a receptacle\n"
      "  slice (object) with (object):     slice an object using a sharp object\n";
  return text;
}

}  // namespace agentrl::envs::alfworld
