package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/decode"
	"github.com/kwatch/kwatch/pipeline"
)

func (e *env) dump(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("dump", flag.ContinueOnError)
	var c common
	var in inputFlags
	c.register(fs, "text, json or ndjson")
	in.register(fs)
	profile := fs.String("profile", "seed", "header versions of profile seed or accepted-2026 (header v3)")
	var filters stringList
	fs.Var(&filters, "filter", "print only the PDUs and events that match `KEY=VALUE`: api=NAME|KEY, client=HOST|CLIENT-ID|INSTANCE-ID, conn=HOST:PORT (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: kwatch dump [--format text|json|ndjson] [--profile seed|accepted-2026] [--port N] [--tls-keylog FILE] FILE...")
		fs.PrintDefaults()
	}
	files, err := parse(fs, args, e.stderr)
	if err != nil {
		return err
	}
	if err := checkFormat(c.format, "text", "json", "ndjson"); err != nil {
		return err
	}
	if len(files) == 0 {
		return usageError{"dump: no capture file given"}
	}
	opts, err := c.pipelineOptions(e)
	if err != nil {
		return err
	}
	defer opts.Keys.Close()
	prof, err := audit.ParseProfile(*profile)
	if err != nil {
		return usageError{fmt.Sprintf("--profile %q: want seed or accepted-2026", *profile)}
	}
	opts.HeaderV3 = audit.HeaderV3(prof)
	filter, err := parseEventFilter(filters)
	if err != nil {
		return err
	}
	src, err := e.openInput(ctx, files, in, opts.Keys)
	if err != nil {
		return err
	}
	defer src.Close()

	w := bufio.NewWriterSize(e.stdout, 64<<10)
	d := &dumper{w: w, format: c.format, names: files, filter: filter}
	d.begin()
	st, runErr := pipeline.Run(ctx, src, opts, d)
	if runErr != nil && st.Packets == 0 {
		// Nothing was read: no output but the error (as kwatch read).
		w.Reset(e.stdout)
		return runErr
	}
	d.end()
	if err := w.Flush(); err != nil {
		return fmt.Errorf("dump: writing output: %w", err)
	}
	return inputResult(st, runErr, e)
}

// dumper prints decoded PDUs and coverage events (kwatch dump).
type dumper struct {
	w      *bufio.Writer
	format string
	n      int
	buf    []byte
	names  captureNames
	filter *eventFilter
}

func (d *dumper) begin() {
	if d.format == "json" {
		d.w.WriteString("[")
	}
}

func (d *dumper) end() {
	if d.format == "json" {
		if d.n > 0 {
			d.w.WriteString("\n")
		}
		d.w.WriteString("]\n")
	}
}

// Event implements decode.Sink.
func (d *dumper) Event(ev *decode.Event) {
	switch ev.Kind {
	case decode.KindRequest, decode.KindResponse, decode.KindCoverage:
	default:
		return
	}
	if !d.filter.keep(ev) {
		return
	}
	switch d.format {
	case "text":
		d.buf = appendText(d.buf[:0], ev, d.names)
	default:
		d.buf = d.buf[:0]
		if d.format == "json" {
			if d.n > 0 {
				d.buf = append(d.buf, ',')
			}
			d.buf = append(d.buf, '\n')
		}
		d.buf = appendJSON(d.buf, ev, d.names)
		if d.format == "ndjson" {
			d.buf = append(d.buf, '\n')
		}
	}
	d.n++
	d.w.Write(d.buf)
}

func appendTime(b []byte, t time.Time) []byte { return t.UTC().AppendFormat(b, audit.TimeFormat) }

func appendUUID(b []byte, u decode.UUID) []byte {
	return base64.RawURLEncoding.AppendEncode(b, u[:])
}

// appendText renders one line a person reads, as tshark would print it.
func appendText(b []byte, ev *decode.Event, names captureNames) []byte {
	b = appendTime(b, ev.Time)
	b = append(b, ' ')
	capture, frame := names.name(ev.Frame)
	if capture != "" {
		b = append(b, audit.PlainText(capture)...)
	}
	b = append(b, '#')
	b = strconv.AppendUint(b, frame, 10)
	b = append(b, ' ')
	switch ev.Kind {
	case decode.KindRequest:
		b = ev.Conn.Client.AppendTo(b)
		b = append(b, " > "...)
		b = ev.Conn.Broker.AppendTo(b)
		b = append(b, " request  "...)
	case decode.KindResponse:
		b = ev.Conn.Client.AppendTo(b)
		b = append(b, " < "...)
		b = ev.Conn.Broker.AppendTo(b)
		b = append(b, " response "...)
	default:
		b = ev.Conn.Client.AppendTo(b)
		b = append(b, " - "...)
		b = ev.Conn.Broker.AppendTo(b)
		b = append(b, " event "...)
		b = append(b, ev.Coverage.String()...)
		if ev.Detail != "" {
			b = append(b, ": "...)
			b = append(b, ev.Detail...)
		}
		if ev.Bytes != 0 {
			b = append(b, " bytes="...)
			b = strconv.AppendInt(b, ev.Bytes, 10)
		}
		if ev.Decrypted {
			b = append(b, " tls"...)
		}
		return append(b, '\n')
	}
	b = append(b, ev.APIKey.String()...)
	b = append(b, '(')
	b = strconv.AppendInt(b, int64(ev.APIKey), 10)
	b = append(b, ") v"...)
	b = strconv.AppendInt(b, int64(ev.APIVersion), 10)
	b = append(b, " hdr"...)
	b = strconv.AppendInt(b, int64(ev.HeaderVersion), 10)
	b = append(b, " corr="...)
	b = strconv.AppendInt(b, int64(ev.CorrelationID), 10)
	if ev.Kind == decode.KindRequest {
		b = append(b, " client_id="...)
		if ev.ClientIDNull {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendQuote(b, string(ev.ClientID))
		}
		b = append(b, " instance="...)
		switch {
		case ev.TagProblem != decode.TagOK:
			b = append(b, "malformed("...)
			b = append(b, ev.TagProblem.String()...)
			b = append(b, ')')
		case ev.HasInstanceID && !ev.InstanceID.IsZero():
			b = appendUUID(b, ev.InstanceID)
		default:
			b = append(b, '-')
		}
	}
	bd := &ev.Body
	if bd.Decoded {
		if bd.Group != "" {
			b = append(b, " group="...)
			b = strconv.AppendQuote(b, bd.Group)
		}
		if bd.HasMemberID || ev.APIKey.IsGroupHeartbeat() && ev.Kind == decode.KindRequest {
			b = append(b, " member_id="...)
			b = strconv.AppendQuote(b, bd.MemberID)
			b = append(b, " epoch="...)
			b = strconv.AppendInt(b, int64(bd.MemberEpoch), 10)
		}
		if bd.HasTelemetryInstanceID {
			b = append(b, " telemetry_id="...)
			b = appendUUID(b, bd.TelemetryInstanceID)
		}
		if bd.HasSubscriptionID {
			b = append(b, " subscription_id="...)
			b = strconv.AppendInt(b, int64(bd.SubscriptionID), 10)
		}
		if bd.ClientSoftwareName != "" || bd.ClientSoftwareVersion != "" {
			b = append(b, " software="...)
			b = strconv.AppendQuote(b, bd.ClientSoftwareName+"/"+bd.ClientSoftwareVersion)
		}
		if bd.HasErrorCode {
			b = append(b, " error="...)
			b = append(b, audit.ErrorName(bd.ErrorCode)...)
			b = append(b, '(')
			b = strconv.AppendInt(b, int64(bd.ErrorCode), 10)
			b = append(b, ')')
		}
	}
	if bd.BodyError {
		b = append(b, " body=undecodable"...)
	}
	if ev.Partial {
		b = append(b, " partial"...)
	}
	if ev.Decrypted {
		b = append(b, " tls"...) // decrypted with the key log's secrets
	}
	return append(b, '\n')
}

// appendJSON renders the NDJSON object of SPEC.md section 5 for kwatch dump.
func appendJSON(b []byte, ev *decode.Event, names captureNames) []byte {
	b = append(b, `{"kind":`...)
	b = audit.AppendJSONString(b, ev.Kind.String())
	b = append(b, `,"time":"`...)
	b = appendTime(b, ev.Time)
	b = append(b, '"')
	capture, frame := names.name(ev.Frame)
	if capture != "" {
		b = append(b, `,"capture":`...)
		b = audit.AppendJSONString(b, capture)
	}
	b = append(b, `,"frame":`...)
	b = strconv.AppendUint(b, frame, 10)
	if ev.Kind == decode.KindCoverage {
		b = append(b, `,"event":`...)
		b = audit.AppendJSONString(b, ev.Coverage.String())
	}
	b = append(b, `,"conn":{"client":"`...)
	b = ev.Conn.Client.AppendTo(b)
	b = append(b, `","broker":"`...)
	b = ev.Conn.Broker.AppendTo(b)
	b = append(b, `"}`...)
	if ev.Kind == decode.KindCoverage {
		if ev.Detail != "" {
			b = append(b, `,"detail":`...)
			b = audit.AppendJSONString(b, ev.Detail)
		}
		if ev.Bytes != 0 {
			b = append(b, `,"bytes":`...)
			b = strconv.AppendInt(b, ev.Bytes, 10)
		}
		if ev.Decrypted {
			b = append(b, `,"decrypted":true`...)
		}
		return append(b, '}')
	}
	b = append(b, `,"api":`...)
	b = audit.AppendJSONString(b, ev.APIKey.String())
	b = append(b, `,"api_key":`...)
	b = strconv.AppendInt(b, int64(ev.APIKey), 10)
	b = append(b, `,"api_version":`...)
	b = strconv.AppendInt(b, int64(ev.APIVersion), 10)
	b = append(b, `,"header_version":`...)
	b = strconv.AppendInt(b, int64(ev.HeaderVersion), 10)
	b = append(b, `,"correlation_id":`...)
	b = strconv.AppendInt(b, int64(ev.CorrelationID), 10)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(ev.Size), 10)
	if ev.Kind == decode.KindRequest {
		b = append(b, `,"client_id":`...)
		if ev.ClientIDNull {
			b = append(b, "null"...)
		} else {
			b = appendJSONBytes(b, ev.ClientID)
		}
		if ev.TagProblem != decode.TagOK {
			b = append(b, `,"instance_id_malformed":`...)
			b = audit.AppendJSONString(b, ev.TagProblem.String())
		} else if ev.HasInstanceID && !ev.InstanceID.IsZero() {
			b = append(b, `,"instance_id":"`...)
			b = appendUUID(b, ev.InstanceID)
			b = append(b, '"')
		}
	} else {
		_, reqFrame := names.name(ev.RequestFrame)
		b = append(b, `,"request_frame":`...)
		b = strconv.AppendUint(b, reqFrame, 10)
	}
	bd := &ev.Body
	if bd.Decoded {
		if ev.APIKey.IsGroupHeartbeat() && ev.Kind == decode.KindRequest {
			b = append(b, `,"group":`...)
			b = audit.AppendJSONString(b, bd.Group)
		}
		if bd.HasMemberID || ev.APIKey.IsGroupHeartbeat() && ev.Kind == decode.KindRequest {
			b = append(b, `,"member_id":`...)
			if bd.HasMemberID || ev.Kind == decode.KindRequest {
				b = audit.AppendJSONString(b, bd.MemberID)
			} else {
				b = append(b, "null"...)
			}
		}
		if ev.APIKey.IsGroupHeartbeat() {
			b = append(b, `,"member_epoch":`...)
			b = strconv.AppendInt(b, int64(bd.MemberEpoch), 10)
		}
		if bd.HasTelemetryInstanceID {
			b = append(b, `,"telemetry_instance_id":"`...)
			b = appendUUID(b, bd.TelemetryInstanceID)
			b = append(b, '"')
		}
		if bd.HasSubscriptionID {
			b = append(b, `,"subscription_id":`...)
			b = strconv.AppendInt(b, int64(bd.SubscriptionID), 10)
		}
		if bd.HasErrorCode {
			b = append(b, `,"error_code":`...)
			b = strconv.AppendInt(b, int64(bd.ErrorCode), 10)
		}
		if bd.ClientSoftwareName != "" || bd.ClientSoftwareVersion != "" {
			b = append(b, `,"client_software_name":`...)
			b = audit.AppendJSONString(b, bd.ClientSoftwareName)
			b = append(b, `,"client_software_version":`...)
			b = audit.AppendJSONString(b, bd.ClientSoftwareVersion)
		}
	}
	if bd.BodyError {
		b = append(b, `,"body_error":true`...)
	}
	if ev.Partial {
		b = append(b, `,"partial":true`...)
	}
	if ev.Decrypted {
		b = append(b, `,"decrypted":true`...)
	}
	return append(b, '}')
}

func appendJSONBytes(b []byte, p []byte) []byte {
	// The conversion does not escape: the compiler reuses p's bytes.
	return audit.AppendJSONString(b, string(p))
}
