package objects

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/minio/minio-go/v7"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
)

// streamClients keeps the clients' random numbers apart from the pattern's.
const streamClients = 0x0B1EC75

// NewClient returns client id. Its session reaches the gateway when the
// engine's sessions implement engine.Objects; otherwise it shares the
// gateway client the load made.
func (w *Workload) NewClient(id int, s engine.Session) (workload.Client, error) {
	w.prepare()
	var s3 *minio.Core
	if o, ok := s.(engine.Objects); ok {
		ctx, cancel := context.WithTimeout(context.Background(), s3Wait)
		defer cancel()
		var err error
		if s3, err = w.connect(ctx, o); err != nil {
			return nil, fmt.Errorf("%s client %d: %w", Name, id, err)
		}
	} else if s3 = w.gateways.last(); s3 == nil {
		_, err := engine.NeedObjects(s)
		return nil, fmt.Errorf("%s client %d: %w", Name, id, err)
	}
	rng := workload.NewRand(w.seed, w.seeded, streamClients, uint64(id))
	return &client{w: w, s3: s3, rng: rng, mix: newDeck(w.readPercent), check: newChecker(w.pattern, w.objectSize)}, nil
}

// client issues one read or write per Do; one goroutine uses it, with its
// own body, reading buffer and random numbers.
type client struct {
	w     *Workload
	s3    *minio.Core
	rng   *rand.Rand
	mix   deck
	body  body
	check *checker
}

// Do reads or overwrites a random object of a random bucket, as the deck
// deals.
func (c *client) Do(ctx context.Context) (int, error) {
	w := c.w
	op := c.mix.deal(c.rng)
	bucket, key := w.buckets[c.rng.IntN(w.containers)], w.keys[c.rng.IntN(w.objects)]
	if op == opRead {
		err := get(ctx, c.s3, c.check, bucket, key)
		switch {
		case err == nil:
			w.readsOK.Add(1)
		case errors.Is(err, ErrCorrupt):
			w.readsCorrupt.Add(1)
		default:
			w.readsFailed.Add(1)
		}
		return op, err
	}
	err := put(ctx, c.s3, &c.body, w.pattern, w.objectSize, bucket, key, c.rng.IntN(variants))
	if err != nil {
		w.writesFailed.Add(1)
	} else {
		w.writesAcked.Add(1)
	}
	return op, err
}

// deck deals ops from 100 cards, read_percent of them reads, in random
// order, taking each card once before the deck is dealt again. Each op is
// random, as CosBench's weighted choice is, but every 100 ops of a client
// hold exactly read_percent reads, so even a short run's shares are the
// target's (independent draws of a few thousand ops stray by 1-2%).
type deck struct {
	cards [100]uint8
	left  int // cards not yet dealt: cards[:left]
}

func newDeck(readPercent int) deck {
	var d deck
	for i := range d.cards {
		if i >= readPercent {
			d.cards[i] = opWrite
		}
	}
	return d
}

// deal returns the next op: a card drawn from those left.
func (d *deck) deal(rng *rand.Rand) int {
	if d.left == 0 {
		d.left = len(d.cards)
	}
	j := rng.IntN(d.left)
	d.left--
	d.cards[j], d.cards[d.left] = d.cards[d.left], d.cards[j]
	return int(d.cards[d.left])
}
