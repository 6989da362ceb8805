# Plots bench/batch_size.csv (written by bench_estimators_data.py --sweep) as
# bench/batch_size.png: examples/s against batch size on workload (a).
#   Rscript bench/plot_batch_size.R
suppressPackageStartupMessages(library(ggplot2))
args <- commandArgs(FALSE)
here <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", args, value = TRUE))))
rates <- read.csv(file.path(here, "batch_size.csv"))
plot <- ggplot(rates, aes(batch_size, examples_per_s, colour = system)) +
  geom_line() +
  geom_point() +
  scale_x_log10(breaks = sort(unique(rates$batch_size))) +
  scale_y_log10(labels = function(x) format(x, big.mark = ",", scientific = FALSE)) +
  labs(x = "batch size (log scale)", y = "training examples/s (log scale)", colour = NULL,
       title = "(a) DNN classifier [64, 32], 100,000 rows x 20 columns",
       subtitle = "shuffle buffer = all rows; 2 shared CPU cores") +
  theme_minimal(base_size = 11) +
  theme(legend.position = "bottom")
ggsave(file.path(here, "batch_size.png"), plot, width = 7, height = 4.5, dpi = 100)
cat("wrote", file.path(here, "batch_size.png"), "\n")
