package study

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"hedgelab/simnet"
)

// The binary form of simnet.Stats in a partial result, written by
// reflection so that a field added to simnet.Stats (or to the capacity
// and feed measurements it holds) is carried without a change here:
// integers as varints, floats as their 8 IEEE-754 bytes (exact), strings
// and slices with their length (a nil slice apart from an empty one),
// pointers with a nil flag, maps sorted by encoded key, structs field by
// field in declaration order, and each HdrHistogram as its geometry and
// its non-zero counts (the library's snapshot, validated by the library
// when read back). statsLayout names the type graph, so a partial
// written by a build with other fields is refused rather than misread.

var statsType = reflect.TypeFor[simnet.Stats]()

// statsLayout is a digest of simnet.Stats' type graph (field names and
// kinds, recursively): partials of one layout decode into it.
var statsLayout = func() string {
	var b strings.Builder
	describe(&b, statsType, map[reflect.Type]bool{})
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:8])
}()

func describe(b *strings.Builder, t reflect.Type, seen map[reflect.Type]bool) {
	if t == histType {
		b.WriteString("hdr")
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		b.WriteString("*")
		describe(b, t.Elem(), seen)
	case reflect.Slice:
		b.WriteString("[]")
		describe(b, t.Elem(), seen)
	case reflect.Array:
		fmt.Fprintf(b, "[%d]", t.Len())
		describe(b, t.Elem(), seen)
	case reflect.Map:
		b.WriteString("map[")
		describe(b, t.Key(), seen)
		b.WriteString("]")
		describe(b, t.Elem(), seen)
	case reflect.Struct:
		if seen[t] {
			b.WriteString(t.String())
			return
		}
		seen[t] = true
		b.WriteString(t.String() + "{")
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue // a run's own bookkeeping: not carried (checkEncodable)
			}
			b.WriteString(f.Name + " ")
			describe(b, f.Type, seen)
			b.WriteString(";")
		}
		b.WriteString("}")
	default:
		b.WriteString(t.Kind().String())
	}
}

// checkLayout reports a part of simnet.Stats the codec cannot carry: an
// unexported field, an interface, a function or a channel, or a
// floating-point field in a map (see checkFloatLayout). It is checked
// once, before the first partial is written or read.
var checkLayout = func() error {
	if err := checkFloatLayout(statsType, "simnet.Stats", map[reflect.Type]bool{}); err != nil {
		return err
	}
	return checkEncodable(statsType, "simnet.Stats", map[reflect.Type]bool{})
}()

func checkEncodable(t reflect.Type, path string, seen map[reflect.Type]bool) error {
	if seen[t] || t == histType {
		return nil
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		return nil
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return checkEncodable(t.Elem(), path+"[]", seen)
	case reflect.Map:
		if err := checkEncodable(t.Key(), path+"[key]", seen); err != nil {
			return err
		}
		return checkEncodable(t.Elem(), path+"[]", seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				// An unexported field of the measurements is the run's own
				// bookkeeping for its invariants (simnet checks them at the
				// end of each run): no figure reads it, so a partial result
				// does not carry it.
				continue
			}
			if err := checkEncodable(f.Type, path+"."+f.Name, seen); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("study: %s is a %s: partial results cannot carry it", path, t.Kind())
}

// encodeStats appends the binary form of s to b.
func encodeStats(b []byte, s *simnet.Stats) ([]byte, error) {
	return encodeValue(b, reflect.ValueOf(s).Elem())
}

func encodeValue(b []byte, v reflect.Value) ([]byte, error) {
	t := v.Type()
	switch t.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.AppendVarint(b, v.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return binary.AppendUvarint(b, v.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float())), nil
	case reflect.String:
		b = binary.AppendUvarint(b, uint64(v.Len()))
		return append(b, v.String()...), nil
	case reflect.Pointer:
		if v.IsNil() {
			return append(b, 0), nil
		}
		b = append(b, 1)
		if t.Elem() == histType {
			return encodeHistogram(b, v.Interface().(*hdr.Histogram)), nil
		}
		return encodeValue(b, v.Elem())
	case reflect.Slice, reflect.Map:
		if v.IsNil() {
			return append(b, 0), nil
		}
		b = binary.AppendUvarint(b, uint64(v.Len())+1)
		if t.Kind() == reflect.Map {
			return encodeMap(b, v)
		}
		fallthrough
	case reflect.Array:
		var err error
		for i := 0; i < v.Len() && err == nil; i++ {
			b, err = encodeValue(b, v.Index(i))
		}
		return b, err
	case reflect.Struct:
		var err error
		for i := 0; i < t.NumField() && err == nil; i++ {
			if t.Field(i).IsExported() {
				b, err = encodeValue(b, v.Field(i))
			}
		}
		return b, err
	}
	return nil, fmt.Errorf("study: cannot encode a %s", t)
}

// encodeMap appends v's entries sorted by their encoded keys.
func encodeMap(b []byte, v reflect.Value) ([]byte, error) {
	type entry struct{ k, v []byte }
	entries := make([]entry, 0, v.Len())
	it := v.MapRange()
	for it.Next() {
		k, err := encodeValue(nil, it.Key())
		if err != nil {
			return nil, err
		}
		x, err := encodeValue(nil, it.Value())
		if err != nil {
			return nil, err
		}
		entries = append(entries, entry{k, x})
	}
	slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(a.k, b.k) })
	for _, e := range entries {
		b = append(append(b, e.k...), e.v...)
	}
	return b, nil
}

// errCorrupt says a partial result's state does not decode.
var errCorrupt = errors.New("corrupt or truncated")

// decoder reads the binary form; the first error sticks.
type decoder struct {
	data []byte
	err  error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
	}
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.data) == 0 {
		d.fail("unexpected end")
		return 0
	}
	c := d.data[0]
	d.data = d.data[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.data)
	if n <= 0 {
		d.fail("bad unsigned number")
		return 0
	}
	d.data = d.data[n:]
	return x
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Varint(d.data)
	if n <= 0 {
		d.fail("bad number")
		return 0
	}
	d.data = d.data[n:]
	return x
}

func (d *decoder) float() float64 {
	if d.err != nil || len(d.data) < 8 {
		d.fail("unexpected end")
		return 0
	}
	x := math.Float64frombits(binary.LittleEndian.Uint64(d.data))
	d.data = d.data[8:]
	return x
}

// length reads a length of items taking at least one byte each, so a
// corrupt length cannot make the decoder allocate more than the input.
func (d *decoder) length() int {
	n := d.uvarint()
	if n > uint64(len(d.data)) {
		d.fail("length %d exceeds the %d bytes left", n, len(d.data))
		return 0
	}
	return int(n)
}

func (d *decoder) bytes() []byte {
	n := d.length()
	if d.err != nil {
		return nil
	}
	b := d.data[:n]
	d.data = d.data[n:]
	return b
}

// decodeStats reads one Stats.
func (d *decoder) decodeStats() *simnet.Stats {
	s := &simnet.Stats{}
	d.value(reflect.ValueOf(s).Elem())
	return s
}

// value decodes into v (settable).
func (d *decoder) value(v reflect.Value) {
	if d.err != nil {
		return
	}
	t := v.Type()
	switch t.Kind() {
	case reflect.Bool:
		switch d.byte() {
		case 0:
		case 1:
			v.SetBool(true)
		default:
			d.fail("bad boolean")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x := d.varint()
		if v.OverflowInt(x) {
			d.fail("%d overflows %s", x, t)
			return
		}
		v.SetInt(x)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x := d.uvarint()
		if v.OverflowUint(x) {
			d.fail("%d overflows %s", x, t)
			return
		}
		v.SetUint(x)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(d.float())
	case reflect.String:
		v.SetString(string(d.bytes()))
	case reflect.Pointer:
		switch d.byte() {
		case 0:
			return
		case 1:
		default:
			d.fail("bad pointer flag")
			return
		}
		if t.Elem() == histType {
			if h := d.histogram(); h != nil {
				v.Set(reflect.ValueOf(h))
			}
			return
		}
		p := reflect.New(t.Elem())
		d.value(p.Elem())
		v.Set(p)
	case reflect.Slice:
		n := d.length()
		if d.err != nil || n == 0 {
			return // nil
		}
		s := reflect.MakeSlice(t, n-1, n-1)
		for i := 0; i < n-1 && d.err == nil; i++ {
			d.value(s.Index(i))
		}
		v.Set(s)
	case reflect.Array:
		for i := 0; i < v.Len() && d.err == nil; i++ {
			d.value(v.Index(i))
		}
	case reflect.Map:
		n := d.length()
		if d.err != nil || n == 0 {
			return
		}
		m := reflect.MakeMapWithSize(t, n-1)
		for i := 0; i < n-1 && d.err == nil; i++ {
			k := reflect.New(t.Key()).Elem()
			x := reflect.New(t.Elem()).Elem()
			d.value(k)
			d.value(x)
			if d.err == nil && m.MapIndex(k).IsValid() {
				d.fail("duplicate map key")
			}
			m.SetMapIndex(k, x)
		}
		v.Set(m)
	case reflect.Struct:
		for i := 0; i < t.NumField() && d.err == nil; i++ {
			if t.Field(i).IsExported() {
				d.value(v.Field(i))
			}
		}
	default:
		d.fail("cannot decode a %s", t)
	}
}

// encodeHistogram appends h's geometry, conversion ratio and non-zero
// counts (index gap, count) to b.
func encodeHistogram(b []byte, h *hdr.Histogram) []byte {
	snap := h.Export()
	b = binary.AppendVarint(b, snap.LowestTrackableValue)
	b = binary.AppendVarint(b, snap.HighestTrackableValue)
	b = binary.AppendVarint(b, snap.SignificantFigures)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(snap.IntegerToDoubleConversionRatio))
	nonzero := 0
	for _, c := range snap.Counts {
		if c != 0 {
			nonzero++
		}
	}
	b = binary.AppendUvarint(b, uint64(nonzero))
	next := 0
	for i, c := range snap.Counts {
		if c != 0 {
			b = binary.AppendUvarint(b, uint64(i-next))
			b = binary.AppendVarint(b, c)
			next = i + 1
		}
	}
	return b
}

// countsLens caches the number of counts of each histogram geometry read.
var countsLens sync.Map // [3]int64 -> int

// countsLen returns the number of counts of a valid geometry, or an
// error for one the library refuses.
func countsLen(lowest, highest, sig int64) (int, error) {
	key := [3]int64{lowest, highest, sig}
	if n, ok := countsLens.Load(key); ok {
		return n.(int), nil
	}
	snap := &hdr.Snapshot{LowestTrackableValue: lowest, HighestTrackableValue: highest, SignificantFigures: sig}
	if err := snap.Validate(); err != nil {
		return 0, err
	}
	if highest > 1<<62 {
		return 0, fmt.Errorf("highest trackable value %d is out of range", highest)
	}
	n := len(hdr.Import(snap).Export().Counts)
	countsLens.Store(key, n)
	return n, nil
}

// histogram reads a histogram written by encodeHistogram.
func (d *decoder) histogram() *hdr.Histogram {
	lowest, highest, sig := d.varint(), d.varint(), d.varint()
	ratio := d.float()
	nonzero := d.length()
	if d.err != nil {
		return nil
	}
	n, err := countsLen(lowest, highest, sig)
	if err != nil {
		d.fail("histogram: %v", err)
		return nil
	}
	counts := make([]int64, n)
	next := uint64(0)
	for range nonzero {
		i := next + d.uvarint()
		c := d.varint()
		if d.err != nil {
			return nil
		}
		if i >= uint64(n) || c == 0 {
			d.fail("histogram: bad count")
			return nil
		}
		counts[i] = c
		next = i + 1
	}
	snap := &hdr.Snapshot{LowestTrackableValue: lowest, HighestTrackableValue: highest, SignificantFigures: sig,
		Counts: counts, IntegerToDoubleConversionRatio: ratio}
	if err := snap.Validate(); err != nil {
		d.fail("histogram: %v", err)
		return nil
	}
	return hdr.Import(snap)
}
