package audio

import "io"

// synthBlockSamples is the size of the sample cache of a synthFile.
const synthBlockSamples = 8192

// synthFile is a prefix of header bytes followed by the 16-bit
// little-endian PCM samples of a mixer. Samples are synthesised a block at
// a time for the region being read, so memory stays bounded whatever the
// length. Not safe for concurrent use: the block is a cache.
type synthFile struct {
	prefix     []byte
	gen        *mixer
	block      []byte // cached samples [blockStart, blockStart+blockLen)
	blockStart int64
	blockLen   int64
}

// newSynthReader returns prefix followed by the samples of gen as an
// io.ReadSeeker.
func newSynthReader(prefix []byte, gen *mixer) io.ReadSeeker {
	f := &synthFile{prefix: prefix, gen: gen, blockStart: -1}
	return io.NewSectionReader(f, 0, int64(len(prefix))+2*gen.n)
}

// ReadAt implements io.ReaderAt for offsets >= 0.
func (f *synthFile) ReadAt(p []byte, off int64) (int, error) {
	pl := int64(len(f.prefix))
	size := pl + 2*f.gen.n
	n := 0
	for n < len(p) && off < size {
		var c int
		if off < pl {
			c = copy(p[n:], f.prefix[off:])
		} else {
			s := (off - pl) / 2
			if f.blockStart < 0 || s < f.blockStart || s >= f.blockStart+f.blockLen {
				f.load(s - s%synthBlockSamples)
			}
			c = copy(p[n:], f.block[off-pl-2*f.blockStart:2*f.blockLen])
		}
		n += c
		off += int64(c)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// load caches the block of samples starting at first.
func (f *synthFile) load(first int64) {
	if f.block == nil {
		f.block = make([]byte, 2*synthBlockSamples)
	}
	f.blockStart = first
	f.blockLen = min(synthBlockSamples, f.gen.n-first)
	f.gen.fill(first, f.block[:2*f.blockLen])
}
