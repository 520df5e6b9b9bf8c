# The target models' settings every group of scripts/eval-report.sh uses, in one place
# (chosen on the validation split of the full data; docs/EVALUATION.md "Protocol").
# --l2 is the weight of the L2 penalty per epoch (eval/model.h, ModelOptions::l2).
# Sourced by the group scripts; bash array.
MODEL_FLAGS=(--dim=16 --hidden=32 --learning_rate=0.1 --l2=1 --max_epochs=15 --patience=2)
