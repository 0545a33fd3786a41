package study

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"hedgelab/simnet"
)

// Partial is a shard's partial result ([SimulateShard]): for each
// (input, policy) pair with runs in the shard, the fold of its
// replications there — counters and histograms, never the samples, so
// its size does not grow with the operations — with the floating-point
// fields zeroed, and for each replication whether an operation arrived,
// its headline figures (for the confidence intervals) and its
// floating-point fields (a few numbers: the RU sums and each timeline
// window's threshold sum; see floats.go). [ShardMerge] adds them up in
// the single run's order, so the merged results are SimulateAll's bit for
// bit.
type Partial struct {
	// Shard is the share of the study it holds.
	Shard Shard
	shape []inputShape
	pairs []pairState
}

// inputShape is the size of one input: its policies and replications.
type inputShape struct{ policies, reps int }

// pairState is one (input, policy) pair's share of a shard: replications
// first .. first+len(reps)-1.
type pairState struct {
	in, p, first int
	state        *simnet.Stats // the fold, floating-point fields zeroed
	reps         []repRecord
}

func shapeOf(inputs []Input) []inputShape {
	out := make([]inputShape, len(inputs))
	for i, in := range inputs {
		out[i] = inputShape{len(in.Policies), in.Replications}
	}
	return out
}

func describeShape(s []inputShape) string {
	if len(s) == 1 {
		return fmt.Sprintf("1 input of %d policies × %d replications", s[0].policies, s[0].reps)
	}
	parts := make([]string, 0, min(len(s), 4))
	for i, x := range s {
		if i == 3 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%d×%d", x.policies, x.reps))
	}
	return fmt.Sprintf("%d inputs of policies × replications %s", len(s), strings.Join(parts, ", "))
}

// Runs returns the number of runs (policy × replication) p holds.
func (p *Partial) Runs() int {
	n := 0
	for _, q := range p.pairs {
		n += len(q.reps)
	}
	return n
}

// partialMagic opens a partial result's binary form, then its format
// version.
const (
	partialMagic   = "hedgesim partial result\n"
	partialVersion = 1
)

// maxPartialBytes bounds a partial result's decompressed size (a guard
// against a corrupt length; real ones are far smaller).
const maxPartialBytes = 16 << 30

// WriteTo writes p's binary form, gzip-compressed, to w: the same bytes
// for the same partial result. It implements io.WriterTo.
func (p *Partial) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	bw := bufio.NewWriter(cw)
	zw, _ := gzip.NewWriterLevel(bw, gzip.BestSpeed)
	err := p.encode(zw)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return cw.n, err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

func (p *Partial) encode(w io.Writer) error {
	b := []byte(partialMagic)
	b = binary.AppendUvarint(b, partialVersion)
	b = binary.AppendUvarint(b, uint64(len(statsLayout)))
	b = append(b, statsLayout...)
	b = binary.AppendUvarint(b, uint64(p.Shard.Index))
	b = binary.AppendUvarint(b, uint64(p.Shard.Count))
	b = binary.AppendUvarint(b, uint64(len(p.shape)))
	for _, s := range p.shape {
		b = binary.AppendUvarint(b, uint64(s.policies))
		b = binary.AppendUvarint(b, uint64(s.reps))
	}
	b = binary.AppendUvarint(b, uint64(len(p.pairs)))
	for _, q := range p.pairs {
		b = binary.AppendUvarint(b, uint64(q.in))
		b = binary.AppendUvarint(b, uint64(q.p))
		b = binary.AppendUvarint(b, uint64(q.first))
		b = binary.AppendUvarint(b, uint64(len(q.reps)))
		var err error
		if b, err = encodeStats(b, q.state); err != nil {
			return err
		}
		for _, r := range q.reps {
			if r.empty {
				b = append(b, 0)
			} else {
				b = append(b, 1)
				b = binary.AppendUvarint(b, uint64(len(r.figures)))
				for _, x := range r.figures {
					b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
				}
				b = binary.AppendUvarint(b, uint64(len(r.feed)))
				for _, x := range r.feed {
					b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
				}
			}
			if b, err = encodeStats(b, r.floats); err != nil {
				return err
			}
		}
		// One pair at a time: the encoded form is never held whole.
		if _, err := w.Write(b); err != nil {
			return err
		}
		b = b[:0]
	}
	_, err := w.Write(b)
	return err
}

// ReadPartial reads a partial result written by [Partial.WriteTo].
// Errors: not a partial result, one of another format version or written
// by a build whose measurements (simnet.Stats) have other fields, or a
// corrupt or truncated one.
func ReadPartial(r io.Reader) (*Partial, error) {
	if checkLayout != nil {
		return nil, checkLayout
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, errors.New("not a partial result (not gzip-compressed)")
	}
	data, err := io.ReadAll(io.LimitReader(zr, maxPartialBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	if len(data) > maxPartialBytes {
		return nil, fmt.Errorf("larger than %d GiB decompressed: not a partial result", maxPartialBytes>>30)
	}
	if !bytes.HasPrefix(data, []byte(partialMagic)) {
		return nil, errors.New("not a partial result")
	}
	d := &decoder{data: data[len(partialMagic):]}
	if v := d.uvarint(); d.err == nil && v != partialVersion {
		return nil, fmt.Errorf("a partial result of format %d; this build reads format %d", v, partialVersion)
	}
	if layout := string(d.bytes()); d.err == nil && layout != statsLayout {
		return nil, errors.New("written by a build whose measurements (simnet.Stats) have other fields; run every shard and the merge with one build")
	}
	count := func(limit uint64) int {
		n := d.uvarint()
		if d.err == nil && n > limit {
			d.fail("%d is out of range", n)
		}
		return int(n)
	}
	p := &Partial{}
	p.Shard.Index = count(MaxShards)
	p.Shard.Count = count(MaxShards)
	p.shape = make([]inputShape, d.length())
	for i := range p.shape {
		p.shape[i] = inputShape{count(math.MaxInt32), count(math.MaxInt32)}
	}
	npairs := d.length()
	for k := 0; k < npairs && d.err == nil; k++ {
		q := pairState{in: count(math.MaxInt32), p: count(math.MaxInt32), first: count(math.MaxInt32)}
		q.reps = make([]repRecord, d.length())
		if d.err == nil && (q.in >= len(p.shape) || q.p >= p.shape[q.in].policies || q.first+len(q.reps) > p.shape[q.in].reps) {
			d.fail("runs out of the study's range")
		}
		if k > 0 && d.err == nil {
			prev := p.pairs[k-1]
			if q.in < prev.in || q.in == prev.in && q.p <= prev.p {
				d.fail("policy runs out of order")
			}
		}
		q.state = d.decodeStats()
		for r := range q.reps {
			switch d.byte() {
			case 0:
				q.reps[r].empty = true
			case 1:
				figs := make([]float64, d.length())
				for i := range figs {
					figs[i] = d.float()
				}
				q.reps[r].figures = figs
				if n := d.length(); n > 0 {
					feed := make([]float64, n)
					for i := range feed {
						feed[i] = d.float()
					}
					q.reps[r].feed = feed
				}
			default:
				d.fail("bad replication flag")
			}
			q.reps[r].floats = d.decodeStats()
		}
		if d.err == nil && (q.state.Latency == nil || q.state.Policy == "") {
			d.fail("a policy run without measurements")
		}
		p.pairs = append(p.pairs, q)
	}
	if d.err == nil && len(d.data) > 0 {
		d.fail("%d bytes after the end", len(d.data))
	}
	if d.err != nil {
		return nil, d.err
	}
	return p, nil
}
