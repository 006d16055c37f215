package pcapgen

import "encoding/binary"

// WithSecrets returns the little-endian pcapng file b (as this package
// writes it: a section header and one interface description first) with a
// Decryption Secrets Block of secrets type typ and payload data inserted
// before its first packet, as `editcap --inject-secrets` places it. length
// is the block's secrets length field (negative: len(data); another value
// writes a corrupt block).
func WithSecrets(b []byte, typ uint32, data []byte, length int) []byte {
	shb := binary.LittleEndian.Uint32(b[4:])
	idb := binary.LittleEndian.Uint32(b[shb+4:])
	head := int(shb + idb)
	pad := (4 - len(data)%4) % 4
	total := 12 + 8 + len(data) + pad
	if length < 0 {
		length = len(data)
	}
	blk := binary.LittleEndian.AppendUint32(nil, 0x0a)
	blk = binary.LittleEndian.AppendUint32(blk, uint32(total))
	blk = binary.LittleEndian.AppendUint32(blk, typ)
	blk = binary.LittleEndian.AppendUint32(blk, uint32(length))
	blk = append(blk, data...)
	blk = append(blk, make([]byte, pad)...)
	blk = binary.LittleEndian.AppendUint32(blk, uint32(total))
	return append(append(append([]byte(nil), b[:head]...), blk...), b[head:]...)
}
