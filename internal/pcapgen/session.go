package pcapgen

import "github.com/twmb/franz-go/pkg/kmsg"

// Session is a Kafka client speaking on a Conn: it numbers correlation IDs
// and fills request headers from a template.
type Session struct {
	Conn *Conn
	// Header is the template of every request: ClientID, InstanceID,
	// RawTags and HeaderVersion are used as they are when a request is
	// sent, so a scenario changes them between requests; CorrelationID is
	// the next one to use. APIKey and APIVersion come from each body.
	Header RequestHeader
}

// Session starts a Kafka client on cn with header template h.
func (cn *Conn) Session(h RequestHeader) *Session { return &Session{Conn: cn, Header: h} }

// Encode encodes body with the template header and the next correlation ID,
// and advances it, without sending.
func (s *Session) Encode(body kmsg.Request) (corr int32, frame []byte) {
	h := s.Header
	h.APIVersion = body.GetVersion()
	s.Header.CorrelationID++
	return h.CorrelationID, EncodeRequest(h, body)
}

// Request sends body at its own version (body.GetVersion) and returns its
// correlation ID and the frame number that completed it.
func (s *Session) Request(body kmsg.Request) (corr int32, frame int) {
	corr, b := s.Encode(body)
	return corr, s.Conn.Send(b)
}

// Pipeline sends several requests in one write (sharing segments) and
// returns their correlation IDs and completion frame numbers.
func (s *Session) Pipeline(bodies ...kmsg.Request) (corrs []int32, frames []int) {
	parts := make([][]byte, len(bodies))
	corrs = make([]int32, len(bodies))
	for i, b := range bodies {
		corrs[i], parts[i] = s.Encode(b)
	}
	return corrs, s.Conn.Write(ToBroker, parts...)
}

// Respond sends body, at its own version, as the response to corr.
func (s *Session) Respond(corr int32, body kmsg.Response) int {
	return s.Conn.Reply(EncodeResponse(corr, body.GetVersion(), body))
}

// RoundTrip sends req, then resp at req's version, and returns both
// completion frame numbers.
func (s *Session) RoundTrip(req kmsg.Request, resp kmsg.Response) (reqFrame, respFrame int) {
	corr, reqFrame := s.Request(req)
	resp.SetVersion(req.GetVersion())
	return reqFrame, s.Respond(corr, resp)
}
