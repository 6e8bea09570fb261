// The dashboard page's own files, embedded in the binary at build time from
// src/cli/dashboard/{index.html,app.js,app.css} (CMakeLists.txt generates
// the definitions), so the page needs no installed files of its own.
#pragma once

#include <cstddef>

namespace agentrl::dashboard {

struct EmbeddedFile {
  const char* name;  // "index.html", "app.js", "app.css"
  const char* mime;
  const unsigned char* data;
  size_t size;
};

extern const EmbeddedFile kEmbeddedFiles[];
extern const size_t kEmbeddedFileCount;

}  // namespace agentrl::dashboard
