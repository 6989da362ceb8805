# make demo: SPEC section 3's progress-bar and history examples on mtcars, in R.
library(pyhooks)

fcs <- feature_columns(column_numeric("drat"))
input <- input_fn(mtcars, response = "mpg", features = c("drat", "cyl"), batch_size = 8L)

cat("== A progress bar while training\n")
lr <- linear_regressor(feature_columns = fcs)
lr
history <- lr %>% train(input_fn = input, steps = 2, hooks = list(hook_progress_bar()))

cat("\n== The training history, every 2 steps (train() goes on from step 2)\n")
training_history <- train(lr, input_fn = input, steps = 4,
                          hooks = list(hook_history_saver(every_n_step = 2)))
training_history

cat("\n== Predictions, one per car\n")
head(predict(lr, input_fn(mtcars, features = c("drat", "cyl"))))
