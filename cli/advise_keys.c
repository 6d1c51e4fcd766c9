/* vigil — the [advise] section: `vigil advise`, the frequency advice of the
 * Fluid model (cli/fluid_model.h). */
#include "cli_settings.h"
#include "vigil/schema.h"

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct vigil_advise_settings, power_exponent), .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "3", .min = 0.5, .max = 6,
     .description = "c in P(f) = P_static + P_dyn·(f/F_max)^c when the runs' per-second "
                    "frequency took two values only, too few to fit it: 3 when the voltage "
                    "scales with the frequency (P ∝ V²f)"},
    {VIGIL_SETTING(struct vigil_advise_settings, frequency_step_mhz), .type = VIGIL_CONFIG_INT,
     .default_value = "100", .min = 1, .max = 1000,
     .description = "the step between the frequencies the node offers, from cpu.frequency_min_hz "
                    "to cpu.frequency_max_hz (cpufreq's P-states are 100 MHz apart on most "
                    "x86 nodes); frequencies closer than half of it count as the same"},
};
const struct vigil_settings_table vigil_advise_keys =
    VIGIL_SETTINGS_TABLE("advise", struct vigil_advise_settings, keys, NULL);
