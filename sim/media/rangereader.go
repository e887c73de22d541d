package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

const (
	blockSize = 64 << 10
	maxBlocks = 64
	// maxBuffered is how much of a body is kept when the server ignores
	// Range requests (the media header must lie within it).
	maxBuffered = 16 << 20
)

var errBeyondBuffered = errors.New("the media header lies beyond the first 16 MiB and the server does not support Range requests")

// rangeReader is an io.ReaderAt over HTTP Range requests, reading whole
// 64 KiB blocks and keeping a few, so probing a header takes few round trips
// and never downloads the media payload. When the server ignores Range, it
// keeps the first 16 MiB of the body instead.
type rangeReader struct {
	ctx    context.Context
	client *http.Client
	url    string
	size   int64 // -1 when unknown

	ranged   bool
	buffered []byte // whole prefix when the server ignores Range
	buf      []byte // where buffered is read (nil: allocated); maxBuffered long
	blocks   map[int64][]byte
}

func (rr *rangeReader) get(from, to int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(rr.ctx, http.MethodGet, rr.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", from, to))
	req.Header.Set("User-Agent", "dubsim (media probe)")
	resp, err := rr.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
		resp.Body.Close()
		if resp.StatusCode == http.StatusRequestedRangeNotSatisfiable {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return resp, nil
}

// open reads the first block and learns the size and Range support.
func (rr *rangeReader) open() error {
	rr.size = -1
	rr.blocks = map[int64][]byte{}
	resp, err := rr.get(0, blockSize-1)
	if errors.Is(err, io.EOF) {
		return errors.New("the file is empty")
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusPartialContent {
		rr.ranged = true
		if cr := resp.Header.Get("Content-Range"); cr != "" {
			if i := strings.LastIndexByte(cr, '/'); i >= 0 {
				if n, err := strconv.ParseInt(cr[i+1:], 10, 64); err == nil {
					rr.size = n
				}
			}
		}
		_, err := rr.keep(0, resp.Body)
		return err
	}
	// One buffer of the size needed (at most maxBuffered), not the
	// doubling of io.ReadAll: a probe holds at most 16 MiB, whatever the
	// body (fidelity HP1).
	limit := int64(maxBuffered)
	if resp.ContentLength >= 0 && resp.ContentLength < limit {
		limit = resp.ContentLength
	}
	b := rr.buf
	if int64(len(b)) < limit {
		b = make([]byte, limit)
	}
	b = b[:limit]
	n, err := io.ReadFull(resp.Body, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return err
	}
	b = b[:n]
	rr.buffered = b
	rr.size = resp.ContentLength
	if rr.size < 0 && len(b) < maxBuffered {
		rr.size = int64(len(b))
	}
	return nil
}

func (rr *rangeReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if !rr.ranged {
		n := 0
		if off < int64(len(rr.buffered)) {
			if n = copy(p, rr.buffered[off:]); n == len(p) {
				return n, nil
			}
		}
		if rr.size >= 0 && off+int64(n) >= rr.size {
			return n, io.EOF
		}
		return n, errBeyondBuffered // the file goes on past the prefix kept
	}
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		if rr.size >= 0 && pos >= rr.size {
			return n, io.EOF
		}
		idx := pos / blockSize
		blk, err := rr.block(idx)
		if err != nil {
			return n, err
		}
		in := pos - idx*blockSize
		if in >= int64(len(blk)) {
			return n, io.EOF
		}
		n += copy(p[n:], blk[in:])
	}
	return n, nil
}

func (rr *rangeReader) block(idx int64) ([]byte, error) {
	if b, ok := rr.blocks[idx]; ok {
		return b, nil
	}
	if len(rr.blocks) >= maxBlocks {
		for k := range rr.blocks { // evict any: probes read few blocks
			delete(rr.blocks, k)
			break
		}
	}
	resp, err := rr.get(idx*blockSize, (idx+1)*blockSize-1)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent {
		return nil, errors.New("the server stopped honouring Range requests")
	}
	return rr.keep(idx, resp.Body)
}

// keep reads block idx from body and caches it.
func (rr *rangeReader) keep(idx int64, body io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(body, blockSize))
	if err == nil {
		rr.blocks[idx] = b
	}
	return b, err
}
