"""scikit-learn's RandomForestClassifier on exactly the rows jobsight's cross-validation used.

`jobsight model eval --cv K --export DIR` writes DIR/fold<i>-train.csv and fold<i>-test.csv: the
label (class index) first, then the model's features, missing values already filled with the
training medians. This script trains sklearn with the same forest settings (100 trees, sqrt of the
features tried per split, bootstrap, Gini, leaves of one), predicts the top class (no "unknown",
as sklearn has none) and prints JSON: per-class F1 over all folds, macro F1, training and
prediction seconds (2 jobs, as this machine has 2 cores and jobsight uses both).
"""
import glob
import json
import sys
import time

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import f1_score

folder, trees, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
truth, predicted = [], []
train_s = predict_s = 0.0
for train_path in sorted(glob.glob(f"{folder}/fold*-train.csv")):
    test_path = train_path.replace("-train.csv", "-test.csv")
    train = np.loadtxt(train_path, delimiter=",", skiprows=1, ndmin=2)
    test = np.loadtxt(test_path, delimiter=",", skiprows=1, ndmin=2)
    model = RandomForestClassifier(
        n_estimators=trees, max_features="sqrt", min_samples_leaf=1, bootstrap=True,
        random_state=seed, n_jobs=2,
    )
    t = time.perf_counter()
    model.fit(train[:, 1:], train[:, 0].astype(int))
    train_s += time.perf_counter() - t
    t = time.perf_counter()
    predicted.extend(model.predict(test[:, 1:]).tolist())
    predict_s += time.perf_counter() - t
    truth.extend(test[:, 0].astype(int).tolist())
classes = sorted(set(truth))
per_class = f1_score(truth, predicted, labels=classes, average=None).tolist()
print(json.dumps({
    "classes": classes,
    "f1": per_class,
    "macro_f1": float(np.mean(per_class)),
    "train_seconds": train_s,
    "predict_seconds": predict_s,
    "windows": len(truth),
}))
