/** One reading of the live view: when, and messages accepted per second over the last tick. */
export interface RatePoint {
  at: number;
  perSecond: number;
}

const W = 420;
const H = 140;
const PAD = { left: 36, right: 8, top: 10, bottom: 20 };
export const WINDOW_MS = 60_000;

/**
 * Messages per second over the last minute against the number's configured rate (the dashed line): a plain SVG
 * polyline, no chart library.
 */
export function RateChart({ points, rate }: { points: RatePoint[]; rate: number }) {
  const now = points.length ? points[points.length - 1].at : Date.now();
  const shown = points.filter((p) => p.at >= now - WINDOW_MS);
  const top = Math.max(rate, ...shown.map((p) => p.perSecond), 1) * 1.1;
  const x = (at: number) => PAD.left + ((at - (now - WINDOW_MS)) / WINDOW_MS) * (W - PAD.left - PAD.right);
  const y = (v: number) => PAD.top + (1 - v / top) * (H - PAD.top - PAD.bottom);
  const line = shown.map((p) => `${x(p.at).toFixed(1)},${y(p.perSecond).toFixed(1)}`).join(' ');
  return (
    <svg
      className="rate-chart"
      data-testid="rate-chart"
      data-points={shown.length}
      viewBox={`0 0 ${W} ${H}`}
      width={W}
      height={H}
      role="img"
      aria-label={`Messages per second over the last minute; the number's rate is ${rate}/s`}
    >
      <line x1={PAD.left} x2={W - PAD.right} y1={y(0)} y2={y(0)} className="axis" />
      <line x1={PAD.left} x2={PAD.left} y1={PAD.top} y2={y(0)} className="axis" />
      <text x={PAD.left - 4} y={y(0)} className="tick" textAnchor="end" dominantBaseline="middle">
        0
      </text>
      <line x1={PAD.left} x2={W - PAD.right} y1={y(rate)} y2={y(rate)} className="limit" />
      <text x={PAD.left - 4} y={y(rate)} className="tick" textAnchor="end" dominantBaseline="middle">
        {rate}
      </text>
      <text x={W - PAD.right} y={y(rate) - 4} className="tick" textAnchor="end">
        rate limit {rate}/s
      </text>
      <text x={PAD.left} y={H - 4} className="tick">
        −60 s
      </text>
      <text x={W - PAD.right} y={H - 4} className="tick" textAnchor="end">
        now
      </text>
      {shown.length > 1 && <polyline points={line} className="series" />}
      {shown.length > 0 && (
        <circle cx={x(shown[shown.length - 1].at)} cy={y(shown[shown.length - 1].perSecond)} r={3} className="dot" />
      )}
    </svg>
  );
}
