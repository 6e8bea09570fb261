// Precompiled header for every LibTorch-using target (see CMakeLists.txt).
// Only heavy, stable third-party headers belong here.
#pragma once
#include <torch/torch.h>
