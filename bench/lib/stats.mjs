// Percentiles and run aggregation for the benchmark suite.

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function round(x, digits = 3) {
  return Number.isFinite(x) ? Number(x.toFixed(digits)) : null;
}

/// Latency summary of samples in ms.
export function latency(samples) {
  const s = Float64Array.from(samples).sort();
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return {
    n: s.length,
    p50_ms: round(percentile(s, 50), 4),
    p99_ms: round(percentile(s, 99), 4),
    mean_ms: round(mean, 4),
    max_ms: round(s.length ? s[s.length - 1] : NaN, 4),
  };
}

/// Median of the finite values (null when there is none).
export function median(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

export function spread(values) {
  const v = values.filter((x) => Number.isFinite(x));
  if (v.length === 0) return null;
  return [Math.min(...v), Math.max(...v)];
}
