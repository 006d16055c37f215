package capture

// A Packet's Frame names it for a person: its 1-based number in its capture
// file, as Wireshark numbers it (SPEC.md section 5). When several files are
// read as one capture (OpenFiles), the file's index in the list is kept
// above the number, so that one uint64 still names a packet of the whole
// input and orders the packets of one file; SplitFrame takes the two apart
// for output. With one file the index is 0 and Frame is the plain number.
const fileShift = 48

// PackFrame is the Frame of packet n of the file at index file.
func PackFrame(file int, n uint64) uint64 { return uint64(file)<<fileShift | n }

// SplitFrame returns the file index and the packet number in that file.
func SplitFrame(frame uint64) (file int, n uint64) {
	return int(frame >> fileShift), frame & (1<<fileShift - 1)
}
