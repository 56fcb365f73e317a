#pragma once

#include "collective/collective.hpp"
#include "core/units.hpp"
