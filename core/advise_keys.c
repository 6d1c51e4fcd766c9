/* vigil — the [advise] section: `vigil advise`, the frequency advice of the
 * Fluid model (cli/fluid_model.h). */
#include "vigil/schema.h"

const struct vigil_config_key vigil_advise_config_keys[] = {
    {.section = "advise",
     .name = "power_exponent",
     .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "3",
     .min = 0.5,
     .max = 6,
     .description = "c in P(f) = P_static + P_dyn·(f/F_max)^c when the runs' per-second "
                    "frequency took two values only, too few to fit it: 3 when the voltage "
                    "scales with the frequency (P ∝ V²f)"},
    {.section = "advise",
     .name = "frequency_step_mhz",
     .type = VIGIL_CONFIG_INT,
     .default_value = "100",
     .min = 1,
     .max = 1000,
     .description = "the step between the frequencies the node offers, from cpu.frequency_min_hz "
                    "to cpu.frequency_max_hz (cpufreq's P-states are 100 MHz apart on most "
                    "x86 nodes); frequencies closer than half of it count as the same"},
};
const size_t vigil_advise_config_key_count =
    sizeof vigil_advise_config_keys / sizeof vigil_advise_config_keys[0];
