package dist

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Spec describes a distribution in a scenario file; decode it with
// github.com/BurntSushi/toml and call [Spec.Build]. Family selects which
// fields apply; all *Ms fields are milliseconds. A nil pointer means the key
// was absent. Giving a key that does not apply to the family is an error.
//
// Fields per family (optional ones in brackets):
//
//	constant     value_ms
//	uniform      min_ms, max_ms
//	exponential  mean_ms [, offset_ms]
//	normal       mean_ms, stddev_ms           (truncated at 0, see NewNormal)
//	lognormal    median_ms, p99_ms [, offset_ms]  or  mu, sigma [, offset_ms]
//	gamma        shape, scale_ms
//	weibull      shape, scale_ms
//	pareto       xm_ms, alpha
//	empirical    quantiles = [[q, ms], ...]   (see NewEmpirical)
//	mixture      [[components]] tables        (see Component)
//
// Example:
//
//	family    = "lognormal"
//	median_ms = 4.0
//	p99_ms    = 10.0
//	offset_ms = 1.0   # whole distribution shifted: median 5, p99 11
type Spec struct {
	Family     string       `toml:"family"` // constant|uniform|exponential|normal|lognormal|gamma|weibull|pareto|empirical|mixture
	ValueMs    *float64     `toml:"value_ms"`
	MinMs      *float64     `toml:"min_ms"`
	MaxMs      *float64     `toml:"max_ms"`
	MeanMs     *float64     `toml:"mean_ms"`
	StddevMs   *float64     `toml:"stddev_ms"`
	MedianMs   *float64     `toml:"median_ms"`
	P99Ms      *float64     `toml:"p99_ms"`
	Mu         *float64     `toml:"mu"`
	Sigma      *float64     `toml:"sigma"`
	Shape      *float64     `toml:"shape"`
	ScaleMs    *float64     `toml:"scale_ms"`
	XmMs       *float64     `toml:"xm_ms"`
	Alpha      *float64     `toml:"alpha"`
	OffsetMs   *float64     `toml:"offset_ms"`
	Quantiles  [][2]float64 `toml:"quantiles"`  // [[q, ms], ...] for empirical
	Components []Component  `toml:"components"` // for mixture
}

// Component is one weighted component of a mixture Spec. Spec is embedded
// without a tag, so BurntSushi/toml decodes its keys at the same level as
// weight (like encoding/json's embedded-struct promotion):
//
//	family = "mixture"
//
//	[[components]]
//	weight    = 0.99
//	family    = "lognormal"
//	median_ms = 4.0
//	p99_ms    = 10.0
//
//	[[components]]
//	weight = 0.01
//	family = "pareto"
//	xm_ms  = 50.0
//	alpha  = 1.5
//
// When the mixture is itself a named table such as [service_time], the
// components are [[service_time.components]].
type Component struct {
	Weight float64 `toml:"weight"` // relative weight, must be > 0; normalised over all components
	Spec
}

// families lists the valid values of Spec.Family.
var families = []string{"constant", "uniform", "exponential", "normal", "lognormal",
	"gamma", "weibull", "pareto", "empirical", "mixture"}

// Families returns the names a Spec's Family may take, in the order errors
// list them.
func Families() []string { return slices.Clone(families) }

// allowed maps each family to the keys it accepts.
var allowed = map[string][]string{
	"constant":    {"value_ms"},
	"uniform":     {"min_ms", "max_ms"},
	"exponential": {"mean_ms", "offset_ms"},
	"normal":      {"mean_ms", "stddev_ms"},
	"lognormal":   {"median_ms", "p99_ms", "mu", "sigma", "offset_ms"},
	"gamma":       {"shape", "scale_ms"},
	"weibull":     {"shape", "scale_ms"},
	"pareto":      {"xm_ms", "alpha"},
	"empirical":   {"quantiles"},
	"mixture":     {"components"},
}

type specField struct {
	key string
	set bool
}

// fields returns the distribution keys in declaration order and whether
// each was given.
func (s *Spec) fields() []specField {
	return []specField{
		{"value_ms", s.ValueMs != nil},
		{"min_ms", s.MinMs != nil},
		{"max_ms", s.MaxMs != nil},
		{"mean_ms", s.MeanMs != nil},
		{"stddev_ms", s.StddevMs != nil},
		{"median_ms", s.MedianMs != nil},
		{"p99_ms", s.P99Ms != nil},
		{"mu", s.Mu != nil},
		{"sigma", s.Sigma != nil},
		{"shape", s.Shape != nil},
		{"scale_ms", s.ScaleMs != nil},
		{"xm_ms", s.XmMs != nil},
		{"alpha", s.Alpha != nil},
		{"offset_ms", s.OffsetMs != nil},
		{"quantiles", len(s.Quantiles) > 0},
		{"components", len(s.Components) > 0},
	}
}

// val dereferences an optional field, treating absent as 0.
func val(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// Build validates s and returns the Sampler it describes. It never panics.
// Errors name the offending key and carry no file position; examples:
//
//	family is required (one of constant, uniform, ...)
//	unknown family "lognormall" (want one of constant, uniform, ...)
//	field xm_ms does not apply to family "exponential"
//	family "gamma" needs shape and scale_ms
//	family "lognormal" needs median_ms and p99_ms, or mu and sigma
//	family "lognormal" takes median_ms and p99_ms, or mu and sigma, not both
//	mixture: components[2]: weight must be > 0, got -1
//	mixture: components[0]: lognormal: p99_ms (3) must be greater than median_ms (5)
//
// plus the parameter errors of the New* constructors (e.g. "gamma: shape
// must be > 0, got 0"). Component indices are 0-based.
func (s Spec) Build() (Sampler, error) {
	keys, ok := allowed[s.Family]
	if !ok {
		want := strings.Join(families, ", ")
		if s.Family == "" {
			return nil, fmt.Errorf("family is required (one of %s)", want)
		}
		return nil, fmt.Errorf("unknown family %q (want one of %s)", s.Family, want)
	}
	fs := s.fields()
	for _, f := range fs {
		if f.set && !slices.Contains(keys, f.key) {
			return nil, fmt.Errorf("field %s does not apply to family %q", f.key, s.Family)
		}
	}
	// need returns an error listing the required keys that are absent.
	need := func(req ...string) error {
		var missing []string
		for _, k := range req {
			for _, f := range fs {
				if f.key == k && !f.set {
					missing = append(missing, k)
				}
			}
		}
		if len(missing) == 0 {
			return nil
		}
		return fmt.Errorf("family %q needs %s", s.Family, strings.Join(missing, " and "))
	}

	switch s.Family {
	case "constant":
		if err := need("value_ms"); err != nil {
			return nil, err
		}
		return NewConstant(*s.ValueMs)
	case "uniform":
		if err := need("min_ms", "max_ms"); err != nil {
			return nil, err
		}
		return NewUniform(*s.MinMs, *s.MaxMs)
	case "exponential":
		if err := need("mean_ms"); err != nil {
			return nil, err
		}
		return NewExponential(*s.MeanMs, val(s.OffsetMs))
	case "normal":
		if err := need("mean_ms", "stddev_ms"); err != nil {
			return nil, err
		}
		return NewNormal(*s.MeanMs, *s.StddevMs)
	case "lognormal":
		quant := s.MedianMs != nil || s.P99Ms != nil
		param := s.Mu != nil || s.Sigma != nil
		switch {
		case quant && param:
			return nil, errors.New(`family "lognormal" takes median_ms and p99_ms, or mu and sigma, not both`)
		case quant && s.MedianMs != nil && s.P99Ms != nil:
			return NewLogNormalFromQuantiles(*s.MedianMs, *s.P99Ms, val(s.OffsetMs))
		case param && s.Mu != nil && s.Sigma != nil:
			return NewLogNormal(*s.Mu, *s.Sigma, val(s.OffsetMs))
		}
		return nil, errors.New(`family "lognormal" needs median_ms and p99_ms, or mu and sigma`)
	case "gamma":
		if err := need("shape", "scale_ms"); err != nil {
			return nil, err
		}
		return NewGamma(*s.Shape, *s.ScaleMs)
	case "weibull":
		if err := need("shape", "scale_ms"); err != nil {
			return nil, err
		}
		return NewWeibull(*s.Shape, *s.ScaleMs)
	case "pareto":
		if err := need("xm_ms", "alpha"); err != nil {
			return nil, err
		}
		return NewPareto(*s.XmMs, *s.Alpha)
	case "empirical":
		if err := need("quantiles"); err != nil {
			return nil, err
		}
		return NewEmpirical(s.Quantiles)
	default: // "mixture"
		if err := need("components"); err != nil {
			return nil, err
		}
		ws := make([]WeightedSampler, len(s.Components))
		for i, c := range s.Components {
			if err := checkWeight(i, c.Weight); err != nil {
				return nil, err
			}
			cs, err := c.Spec.Build()
			if err != nil {
				return nil, fmt.Errorf("mixture: components[%d]: %w", i, err)
			}
			ws[i] = WeightedSampler{Weight: c.Weight, Sampler: cs}
		}
		return NewMixture(ws)
	}
}
