package scenarios

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"hedgelab/internal/tomltree"
	"hedgelab/simnet/dist"
)

// schemaKeys returns the scalar keys of the scenario schema (File's toml
// tags, array elements and map keys left out, as fields names them),
// excluding names, references and distributions.
func schemaKeys() []string {
	var out []string
	distType := reflect.TypeOf(dist.Spec{})
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("toml")
			if tag == "" {
				continue
			}
			key := strings.TrimPrefix(prefix+"."+tag, ".")
			ft := f.Type
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
				ft = ft.Elem()
			}
			switch {
			case ft == distType:
			case ft.Kind() == reflect.Struct:
				walk(ft, key)
			case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Map:
				out = append(out, key) // network.rtt_ms
			case ft.Kind() == reflect.Map && ft.Elem() != distType:
				out = append(out, key) // ru, workload.mix, ...
			case ft.Kind() == reflect.Map:
			default:
				out = append(out, key)
			}
		}
	}
	walk(reflect.TypeOf(File{}), "")
	return out
}

// notDeclared are schema keys without a range: names, free text and
// references to other entries (checked by the cross-checks).
var notDeclared = []string{"name", "description", "client.region", "account.write_region", "endpoints.region", "endpoints.replica",
	"replicas.name", "replicas.region", "episodes.label", "episodes.target", "faults.targets", "faults.operations",
	"faults.partitions", "background.target", "workload.exclude_regions", "policies.name", "lag.episodes.target"}

// Issue 24: one declaration per key. Every scalar key of the schema has
// one in the table (or is a name or a reference), and the table declares
// no key the schema lacks.
func TestFieldTableCoversSchema(t *testing.T) {
	if err := checkFieldTable(); err != nil {
		t.Fatal(err)
	}
	schema := schemaKeys()
	for _, k := range schema {
		if _, ok := fields[k]; !ok && !slices.Contains(notDeclared, k) {
			t.Errorf("schema key %s has no declaration in fields", k)
		}
	}
	for k := range fields {
		base := strings.Replace(k, "policies.backup_requests.", "policies.", 1)
		if !slices.Contains(schema, base) {
			t.Errorf("fields declares %s, which the schema does not have", k)
		}
	}
	if len(schema) < 120 {
		t.Errorf("found only %d schema keys: the walk is broken", len(schema))
	}
}

// Every value an enum declaration lists is accepted by the builder, and
// a value it does not list is refused, with the declaration's wording.
func TestEnumDeclarationsMatchBuilder(t *testing.T) {
	base := readFile(t, "testdata/valid.toml")
	for _, c := range []struct{ key, edit, with string }{
		{"account.consistency", "[[endpoints]]", "[account]\nconsistency = %q\n\n[[endpoints]]"},
		{"replicas.cancel", "servers = 4", "servers = 4\ncancel = %q"},
		{"fleet.assignment", "[workload]", "[fleet]\ninstances = 2\nassignment = %q\n\n[workload]"},
	} {
		for _, v := range append(slices.Clone(fields[c.key].values), "bogus") {
			src := strings.Replace(base, c.edit, fmt.Sprintf(c.with, v), 1)
			if v == "bounded_staleness" {
				src = strings.Replace(src, "consistency = ", "staleness_bound_ms = 100\nconsistency = ", 1)
			}
			if src == base {
				t.Fatalf("%s: edit %q not found", c.key, c.edit)
			}
			_, err := Parse("x.toml", []byte(src))
			if ok := v != "bogus"; ok != (err == nil) {
				t.Errorf("%s = %q: error %v", c.key, v, err)
			}
		}
	}
}

func TestDefaultSpaceLoads(t *testing.T) {
	sp, err := DefaultSpace()
	if err != nil {
		t.Fatal(err)
	}
	// The default space narrows every declared number and enum the
	// generator writes: it covers everything the schema can say.
	for k, f := range fields {
		if f.kind == kBool || k == "policies.type" {
			continue
		}
		_, num := sp.nums[k]
		_, enum := sp.enums[k]
		if !num && !enum {
			t.Errorf("the default space has no fields.%q", k)
		}
	}
	if len(sp.regions) < 10 || len(sp.kinds) < 10 || len(sp.policies) != len(PolicyTypes()) {
		t.Errorf("regions %d, fault kinds %d, policy types %d", len(sp.regions), len(sp.kinds), len(sp.policies))
	}
	for _, r := range sp.regions {
		for _, z := range sp.regions {
			if _, ok := sp.rtt[r][z]; r != z && !ok {
				t.Errorf("the embedded matrix has no RTT %s -> %s", r, z)
			}
		}
	}
}

// collect walks a generated document and records every key path (array
// elements and map keys left out) and every string value by path.
func collect(t *tomltree.Table, prefix string, keys map[string]bool, values map[string]bool) {
	for _, k := range t.Keys() {
		v, _ := t.Get(k)
		p := strings.TrimPrefix(prefix+"."+k, ".")
		switch x := v.(type) {
		case *tomltree.Table:
			keys[p] = true
			if x.Len() > 0 {
				if _, isDist := x.Get("family"); !isDist && (p == "network.rtt_ms" || p == "ru" || p == "workload.mix" ||
					p == "network.replication_lag_ms" || p == "feed.affinity" || p == "feed.setup.metadata_lag_ms") {
					for _, mk := range x.Keys() {
						mv, _ := x.Get(mk)
						if s, ok := mv.(string); ok {
							values[p+"="+s] = true
						}
						values[p+"."+mk] = true
					}
					continue
				}
			}
			collect(x, p, keys, values)
		case []*tomltree.Table:
			keys[p] = true
			for _, e := range x {
				collect(e, p, keys, values)
			}
		case string:
			keys[p] = true
			values[p+"="+x] = true
		default:
			keys[p] = true
		}
	}
}

// Issue 24: scenario i of seed S is always the same file; 300 generated
// scenarios all validate, and between them they use every declared key,
// every enum value, every policy type, every distribution family, every
// fault kind and every optional section.
func TestGeneratedScenariosValidateAndCoverTheSchema(t *testing.T) {
	sp, err := DefaultSpace()
	if err != nil {
		t.Fatal(err)
	}
	keys, values := map[string]bool{}, map[string]bool{}
	n := 300
	if testing.Short() {
		n = 60
	}
	for i := range n {
		doc, err := sp.Generate(24, i)
		if err != nil {
			t.Fatal(err)
		}
		src := doc.Marshal()
		again, _ := sp.Generate(24, i)
		if !bytes.Equal(src, again.Marshal()) {
			t.Fatalf("scenario %d of seed 24 differs between two generations", i)
		}
		if _, err := Parse(fmt.Sprintf("fuzz-24-%d.toml", i), src); err != nil {
			t.Errorf("scenario %d does not validate: %v", i, err)
		}
		collect(doc, "", keys, values)
		if fs, ok := doc.Get("faults"); ok {
			for _, f := range fs.([]*tomltree.Table) {
				st, _ := f.Get("status")
				sub, _ := f.Get("substatus")
				n, _ := sub.(int64)
				values["fault "+faultName(faultKind{st.(int64), n})] = true
			}
		}
	}
	if testing.Short() {
		return
	}
	var missing []string
	for k, f := range fields {
		base := strings.Replace(k, "policies.backup_requests.", "policies.", 1)
		if !keys[base] && !slices.Contains([]string{"policies.type"}, k) {
			missing = append(missing, k)
		}
		if f.kind == kEnum {
			for _, v := range sp.enums[k] {
				if !values[base+"="+v] {
					missing = append(missing, base+"="+v)
				}
			}
		}
	}
	for _, typ := range PolicyTypes() {
		if !values["policies.type="+typ] {
			missing = append(missing, "policies.type="+typ)
		}
	}
	for _, fam := range dist.Families() {
		if !values["replicas.service.family="+fam] && !values["replicas.service.components.family="+fam] {
			missing = append(missing, "a service time of family "+fam)
		}
	}
	for _, want := range []string{"workload.rate_changes", "workload.clients", "workload.think", "fleet.instances", "feed.change_feed.pollers",
		"feed.setup.events", "lag.episodes", "background.retries", "network.jitter", "replicas.service_by_op", "workload.exclude_regions"} {
		if !keys[want] {
			missing = append(missing, want)
		}
	}
	for _, k := range sp.kinds {
		if s := faultName(k); !values["fault "+s] {
			missing = append(missing, "fault "+s)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("%d scenarios never use: %s", n, strings.Join(missing, ", "))
	}
}

func faultName(k faultKind) string {
	s := strconv.FormatInt(k.status, 10)
	if k.sub != 0 {
		s += "/" + strconv.FormatInt(k.sub, 10)
	}
	return s
}

// A user's space is layered over the default and refused, with file:line:
// key, where it leaves what the validator accepts.
func TestLoadSpace(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("feeds.toml", "[p]\nfeed = 1.0\nchange_feed = 1.0\n\n[fields]\n\"feed.change_feed.pollers\" = [2, 3]\n")
	sp, err := LoadSpace(ok)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		doc, err := sp.Generate(1, i)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := doc.Get("feed")
		cf, _ := f.(*tomltree.Table).Get("change_feed")
		pollers, _ := cf.(*tomltree.Table).Get("pollers")
		if n := pollers.(int64); n < 2 || n > 3 {
			t.Errorf("scenario %d: pollers = %d, outside the space's [2, 3]", i, n)
		}
		if _, err := Parse("x.toml", doc.Marshal()); err != nil {
			t.Errorf("scenario %d: %v", i, err)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"[fields]\n\"replicas.servers\" = [0, 2000000]\n", "bad.toml:2: fields.replicas.servers: [0, 2e+06] is not inside what the validator accepts: must be between 0 and 1000000, got the range"},
		{"[fields]\n\"policies.quantile\" = [0.0, 0.5]\n", "bad.toml:2: fields.policies.quantile: [0, 0.5] is not inside what the validator accepts: must be between 0 and 1 (exclusive), got the range"},
		{"[fields]\n\"replicas.cancel\" = [\"queued\", \"later\"]\n", "bad.toml:2: fields.replicas.cancel.1: later is not a value the validator accepts (want queued, in_service, none, on_start)"},
		{"[fields]\n\"replicas.servrs\" = [1, 2]\n", "bad.toml:2: fields.replicas.servrs: unknown scenario key (the keys are those of scenarios/fields.go)"},
		{"[fields]\n\"replicas.servers\" = [1.5, 2]\n", "bad.toml:2: fields.replicas.servers: an integer key's range must be integers, got 1.5"},
		{"regions = [\"East US\", \"Mars\"]\n", "bad.toml:1: regions.1: \"Mars\" is not a region of the embedded RTT matrix (space/azure_rtt_p50_ms_2026-07.csv)"},
		{"\n[p]\nfed = 0.5\n", "bad.toml:3: p.fed: unknown key: the default space (embedded:space/default.toml) has no p.fed"},
		{"[p]\nfeed = 1.5\n", "bad.toml:2: p.feed: must be between 0 and 1, got 1.5"},
		{"[faults]\nkinds = [\"200\"]\n", "bad.toml:2: faults.kinds.0: \"200\" is not a status the validator accepts (CODE or CODE/SUBSTATUS, 400..599)"},
		{"[policies]\ntypes = [\"statik\"]\n", "bad.toml:2: policies.types.0: unknown policy type \"statik\" (want disabled, static, driver_default, p99_dynamic, capped_quantile, backup_requests, retry_throttle or recommended)"},
		{"[size]\nmax_wrk = 5\n", "bad.toml:2: size.max_wrk: unknown key: the default space (embedded:space/default.toml) has no size.max_wrk"},
		{"[sizes]\nmax_work = 5\n", "bad.toml:1: sizes: unknown field"},
	} {
		_, err := LoadSpace(write("bad.toml", c.text))
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("space %q:\n got: %v\nwant: …%s", c.text, err, c.want)
		}
	}
}
