#pragma once

#include "core/units.hpp"
