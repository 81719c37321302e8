// Command send-and-read sends one email over gRPC and reads the message back:
// the smallest Go client of the mail API, for internal services that call it
// over gRPC.
//
//	MAIL_API_URL=http://127.0.0.1:50051 MAIL_API_KEY=... go run ./cmd/send-and-read -to ada@example.com
//
// MAIL_API_URL is the service's gRPC listener (HTTP/2 without TLS, h2c, as
// on an internal network; an https:// URL is dialled over TLS). It prints the
// send's answer and the message as JSON. On an error it prints the error as
// `{"error":{"code","message"}}` (the code is the contract's, read from the
// google.rpc.ErrorInfo detail) on stderr and exits with status 1.
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"example.com/mailapi/clients/go/gen/google/rpc"
	mailv1 "example.com/mailapi/clients/go/gen/mail/v1"
	"example.com/mailapi/clients/go/gen/mail/v1/mailv1connect"
)

// errorDomain is the domain of the ErrorInfo detail that carries the contract's code.
const errorDomain = "mail.v1"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	flags := flag.NewFlagSet("send-and-read", flag.ContinueOnError)
	to := flags.String("to", "ada@example.com", "recipient address")
	subject := flags.String("subject", "Hello from Go", "subject")
	html := flags.String("html", "<p>Sent over gRPC.</p>", "HTML body")
	key := flags.String("idempotency-key", "", "idempotency key of the send (default: a new random one)")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	baseURL := strings.TrimRight(os.Getenv("MAIL_API_URL"), "/")
	apiKey := os.Getenv("MAIL_API_KEY")
	if baseURL == "" || apiKey == "" {
		fmt.Fprintln(os.Stderr, "send-and-read: set MAIL_API_URL (the gRPC listener, e.g. http://127.0.0.1:50051) and MAIL_API_KEY")
		return 2
	}
	if *key == "" {
		// A send's key names the message: retrying this call with it can never send twice.
		*key = rand.Text()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mailv1connect.NewMailServiceClient(httpClient(), baseURL, connect.WithGRPC())

	send := connect.NewRequest(&mailv1.SendMessageRequest{
		To:             structpb.NewStringValue(*to),
		Subject:        proto.String(*subject),
		Html:           proto.String(*html),
		IdempotencyKey: proto.String(*key),
	})
	send.Header().Set("Authorization", "Bearer "+apiKey)
	sent, err := client.SendMessage(ctx, send)
	if err != nil {
		return fail(err)
	}

	get := connect.NewRequest(&mailv1.GetMessageRequest{Id: sent.Msg.GetId()})
	get.Header().Set("Authorization", "Bearer "+apiKey)
	read, err := client.GetMessage(ctx, get)
	if err != nil {
		return fail(err)
	}

	out, err := json.MarshalIndent(map[string]json.RawMessage{
		"send":    protoJSON(sent.Msg),
		"message": protoJSON(read.Msg.GetMessage()),
	}, "", "  ")
	if err != nil {
		return fail(err)
	}
	fmt.Println(string(out))
	return 0
}

// httpClient speaks HTTP/2 to http:// URLs without TLS (h2c, prior
// knowledge), as gRPC needs, and HTTP/2 over TLS to https:// URLs. Go's
// net/http does both since Go 1.24; no golang.org/x/net/http2 needed.
func httpClient() *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Protocols = new(http.Protocols)
	transport.Protocols.SetHTTP2(true)
	transport.Protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: transport}
}

func protoJSON(m proto.Message) json.RawMessage {
	b, err := protojson.MarshalOptions{UseProtoNames: false}.Marshal(m)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

// fail prints the error in the API's error shape and returns the exit status.
func fail(err error) int {
	code, message := errorCode(err), err.Error()
	var connectErr *connect.Error
	if errors.As(err, &connectErr) {
		message = connectErr.Message()
	}
	body, _ := json.Marshal(map[string]map[string]string{"error": {"code": code, "message": message}})
	fmt.Fprintln(os.Stderr, string(body))
	return 1
}

// errorCode is the contract's code of an error (`API_KEY_INVALID`, ...): the
// reason of its google.rpc.ErrorInfo detail in the mail.v1 domain. Errors
// without one (the network, a proxy) are named by their gRPC code.
func errorCode(err error) string {
	var connectErr *connect.Error
	if !errors.As(err, &connectErr) {
		return "CLIENT_ERROR"
	}
	for _, detail := range connectErr.Details() {
		value, valueErr := detail.Value()
		if valueErr != nil {
			continue
		}
		if info, ok := value.(*rpc.ErrorInfo); ok && info.GetDomain() == errorDomain {
			return info.GetReason()
		}
	}
	return strings.ToUpper(connectErr.Code().String())
}
