"""Pure analysis of parsed fio results: latency histograms, merging, findings."""
