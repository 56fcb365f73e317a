#pragma once

#include "core/other.hpp"
#include "engine/backend.hpp"
