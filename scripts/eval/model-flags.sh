# The target-model settings every evaluation group uses (sourced by the group scripts).
# --l2 is the weight of the L2 penalty per epoch (eval/model.h, ModelOptions::l2).
MODEL_FLAGS=(--models=lr,fm --dim=16 --learning_rate=0.1 --l2=1 --max_epochs=15 --patience=2)
