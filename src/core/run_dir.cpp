#include "agentrl/core/run_dir.h"

#include <filesystem>

#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"

namespace agentrl {

RunDir RunDir::create(const std::string& root, const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    throw ConfigError("run name '" + name + "' must be a single directory name (no '/', not '.' or '..')");
  RunDir d((std::filesystem::path(root.empty() ? "." : root) / name).string());
  for (const auto& sub : {d.path(), d.tb_dir(), d.checkpoints_dir(), d.rollouts_dir()}) ensure_dir(sub);
  return d;
}

RunDir RunDir::open(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) throw IoError("run directory '" + path + "' does not exist");
  return RunDir(path);
}

void RunDir::write_config(const std::string& yaml) const { write_file_atomic(config_yaml(), yaml); }

}  // namespace agentrl
