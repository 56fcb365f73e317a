#pragma once

#include "engine/packet/packet_sim.hpp"
