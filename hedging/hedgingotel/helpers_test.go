package hedgingotel_test

import (
	"fmt"
	"sort"
	"strings"
)

// fmtSorted renders a map with sorted keys.
func fmtSorted(v any) string {
	switch m := v.(type) {
	case map[string]int64:
		var parts []string
		for k, x := range m {
			parts = append(parts, fmt.Sprintf("%s:%d", k, x))
		}
		sort.Strings(parts)
		return strings.Join(parts, " ")
	case map[string][2]float64:
		var parts []string
		for k, x := range m {
			parts = append(parts, fmt.Sprintf("%s:%g/%g", k, x[0], x[1]))
		}
		sort.Strings(parts)
		return strings.Join(parts, " ")
	}
	return fmt.Sprint(v)
}
