// Power by speed: what one switch and one transceiver draw, from the hardware's
// switch.power (a 51.2 Tb/s switch's) and cabling.transceiver_power (a
// 400 Gb/s module's), scaled to the part's speed (bom.cpp counts them).
//
//   switch_power = switch.power x (radix x port_speed / 51.2 Tb/s)^0.14
//     0.14 from the switch ASICs: a 51.2 Tb/s Broadcom Tomahawk 5 at about
//     500 W, 10 % over the 25.6 Tb/s Tomahawk 4 (TechInsights / Linley Group,
//     "Tomahawk 5 Switches At 51.2Tbps", 2022): 1.1 = 2^0.14 a doubling.
//   optic_power  = cabling.transceiver_power x (link speed / 400 Gb/s)^0.83
//     0.83 from NVIDIA's LinkX transceiver specifications: a 400G single-port
//     OSFP draws 9 W at most (MMA4Z00-NS400 multimode, MMS4X00-NS400
//     single-mode), an 800G twin-port OSFP 15 W (MMA4Z00-NS multimode) to
//     17 W (MMS4X00-NS single-mode): the midpoint 16 W / 9 W = 1.78 = 2^0.83.
//
// At the defaults (radix 128 x 400G, 400G links) both are the keys' values.
// Until 2026-12 both were flat: an 800 Gb/s fabric drew exactly the power of
// the same fabric at 400 Gb/s (podnet optimize showed 400G and 800G designs
// at one power). A NIC's own silicon is in server.power (not scaled); the
// optics at its end are transceivers. The exponents are fixed model figures,
// not keys: a scenario for one known switch sets switch.power to its figure
// at 51.2 Tb/s equivalent.
#pragma once

#include "core/units.hpp"
#include "topology/hardware.hpp"

namespace podnet::topology {

inline constexpr double kSwitchPowerReferenceBps = 51.2e12;
inline constexpr double kSwitchPowerExponent = 0.14;
inline constexpr double kOpticPowerReferenceBps = 400e9;
inline constexpr double kOpticPowerExponent = 0.83;

// Watts of one switch of hw.radix ports at hw.port_speed (without optics).
double switch_power(const Hardware& hw);
// Watts of one transceiver on a link of `speed`.
double optic_power(const Hardware& hw, Bandwidth speed);

}  // namespace podnet::topology
