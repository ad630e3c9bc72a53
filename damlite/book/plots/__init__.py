"""The book's figures (matplotlib; small, one figure idea each), by chapter.

Chapters call these so that their cells stay short. Colours come from the Okabe-Ito
palette (distinguishable with the common colour-vision deficiencies) and every series
also differs in line style or marker, so nothing relies on colour alone.

* ``_style``: the palette, the inline PNG format, log-axis helpers;
* ``_capacity``: capacity, interaction functions, recall (chapter 1);
* ``_formats``: floating-point formats and their limits (chapter 3);
* ``_homogeneity``: where the rescaling changes updates (chapter 4);
* ``_normalized``: the two networks side by side, the scalings (chapter 5);
* ``_sweeps``: hyperparameter sweeps of the autoassociative memory (chapter 6);
* ``_mnist``: digits, accuracy, F1 heatmaps, memories (chapter 7).

Every figure is importable from here, ``damlite.book.plots.plot_sweep_heatmaps``.
"""
from __future__ import annotations

from ._capacity import (plot_dam_capacity, plot_energy_and_basins, plot_hopfield_capacity, plot_interactions,
                        plot_recall)
from ._formats import (FORMAT_STYLES, plot_overflow_frontier, plot_power_and_limits, plot_precision_study,
                      plot_underflow_frontier)
from ._homogeneity import plot_disagreement_table, plot_scale_sweep
from ._mnist import (plot_accuracy_curves, plot_confusion, plot_digits, plot_f1_heatmaps, plot_f1_panels,
                    plot_memories, plot_metric_profiles)
from ._normalized import (SCALING_STYLES, plot_energy_magnitudes, plot_sign_error_rates, plot_survival_map,
                         plot_trajectory_gap)
from ._style import INV_TEMPERATURE_LABELS, OKABE_ITO, plain_log_labels, sharp_inline_figures
from ._sweeps import (plot_convention_b, plot_dead_memories, plot_dtype_agreement, plot_optimum_vs_n, plot_readings,
                     plot_setting_effects, plot_sweep_heatmaps)



__all__ = [
    "FORMAT_STYLES", "INV_TEMPERATURE_LABELS", "OKABE_ITO", "SCALING_STYLES", "plain_log_labels",
    "plot_accuracy_curves", "plot_confusion", "plot_convention_b", "plot_dam_capacity", "plot_dead_memories", "plot_digits",
    "plot_disagreement_table", "plot_dtype_agreement", "plot_energy_and_basins", "plot_energy_magnitudes", "plot_f1_heatmaps",
    "plot_f1_panels", "plot_hopfield_capacity", "plot_interactions", "plot_memories", "plot_metric_profiles",
    "plot_optimum_vs_n", "plot_overflow_frontier", "plot_power_and_limits", "plot_precision_study",
    "plot_readings", "plot_recall", "plot_scale_sweep", "plot_setting_effects", "plot_sign_error_rates", "plot_survival_map",
    "plot_sweep_heatmaps", "plot_trajectory_gap", "plot_underflow_frontier", "sharp_inline_figures",
]
