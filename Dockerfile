FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/dpproxy ./cmd/dpproxy

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/dpproxy /dpproxy
COPY examples/ /etc/dpproxy/
EXPOSE 3307
ENTRYPOINT ["/dpproxy"]
