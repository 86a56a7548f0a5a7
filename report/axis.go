package report

import (
	"math"
)

// fit computes the axis domain and ticks from data values (NaNs ignored).
func (a *axis) fit(vals []float64) {
	if a.Scale == categoryScale {
		a.lo, a.hi = -0.5, float64(len(a.Categories))-0.5
		a.ticks = nil
		for i := range a.Categories {
			a.ticks = append(a.ticks, float64(i))
		}
		return
	}
	lo, hi, ok := finiteRange(vals, a.Scale != linearScale)
	if a.Ticks != nil {
		lo, hi, ok = finiteRangeWith(lo, hi, ok, a.Ticks, a.Scale != linearScale)
	}
	if !ok {
		lo, hi = 0, 1
		if a.Scale != linearScale {
			lo, hi = 1, 10
		}
	}
	switch a.Scale {
	case log10Scale:
		a.lo, a.hi, a.ticks = log10Ticks(lo, hi)
	case log2Scale:
		// Half a doubling of room either side keeps end points off the frame.
		a.lo, a.hi, a.ticks = lo/math.Sqrt2, hi*math.Sqrt2, a.Ticks
	default:
		if a.ZeroBased {
			lo, hi = math.Min(lo, 0), math.Max(hi, 0)
		}
		a.lo, a.hi, a.ticks = linearTicks(lo, hi)
		if a.Tight && hi > lo {
			a.lo, a.hi, a.ticks = lo, hi, within(a.ticks, lo, hi)
		}
	}
	if a.Ticks != nil && a.Scale != log2Scale {
		a.ticks = a.Ticks
	}
}

// within keeps the ticks inside [lo, hi].
func within(ticks []float64, lo, hi float64) []float64 {
	var out []float64
	for _, t := range ticks {
		if t >= lo-1e-9 && t <= hi+1e-9 {
			out = append(out, t)
		}
	}
	return out
}

// finiteRange is the min and max of the finite values (positive only when
// positive is set, for log axes).
func finiteRange(vals []float64, positive bool) (lo, hi float64, ok bool) {
	return finiteRangeWith(math.Inf(1), math.Inf(-1), false, vals, positive)
}

func finiteRangeWith(lo, hi float64, ok bool, vals []float64, positive bool) (float64, float64, bool) {
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) || (positive && v <= 0) {
			continue
		}
		lo, hi, ok = math.Min(lo, v), math.Max(hi, v), true
	}
	return lo, hi, ok
}

// linearTicks widens [lo, hi] to nice round bounds and returns about five
// ticks at a 1, 2 or 5 times a power of ten step.
func linearTicks(lo, hi float64) (float64, float64, []float64) {
	if hi == lo {
		pad := math.Max(math.Abs(lo)*0.1, 1)
		lo, hi = lo-pad, hi+pad
		if lo < 0 && lo+pad >= 0 {
			lo = 0
		}
	}
	step := niceStep((hi - lo) / 5)
	nlo, nhi := math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	var ticks []float64
	for i := 0; ; i++ {
		v := nlo + float64(i)*step
		if v > nhi+step/2 {
			break
		}
		ticks = append(ticks, v)
	}
	return nlo, nhi, ticks
}

// niceStep rounds raw up to 1, 2, 5 or 10 times a power of ten.
func niceStep(raw float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / mag; {
	case f <= 1:
		return mag
	case f <= 2:
		return 2 * mag
	case f <= 5:
		return 5 * mag
	}
	return 10 * mag
}

// log10Ticks widens [lo, hi] to whole decades; with few decades it adds the
// 2 and 5 multiples so the axis still has enough labels to read.
func log10Ticks(lo, hi float64) (float64, float64, []float64) {
	dlo, dhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if dhi == dlo {
		dhi++
	}
	var ticks []float64
	for d := dlo; d <= dhi; d++ {
		base := math.Pow(10, d)
		ticks = append(ticks, base)
		if dhi-dlo <= 2 && d < dhi {
			ticks = append(ticks, 2*base, 5*base)
		}
	}
	return math.Pow(10, dlo), math.Pow(10, dhi), ticks
}

// frac maps a data value to 0..1 along the axis.
func (a *axis) frac(v float64) float64 {
	switch a.Scale {
	case log10Scale, log2Scale:
		if v <= 0 {
			return 0
		}
		return (math.Log(v) - math.Log(a.lo)) / (math.Log(a.hi) - math.Log(a.lo))
	}
	return (v - a.lo) / (a.hi - a.lo)
}

func (a *axis) format(v float64) string {
	if a.Scale == categoryScale {
		i := int(v)
		if i >= 0 && i < len(a.Categories) {
			return a.Categories[i]
		}
		return ""
	}
	if a.Format != nil {
		return a.Format(v)
	}
	return fmtSI(v)
}
