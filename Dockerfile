# The image a study on Kubernetes runs its load generator in (platform:
# kubernetes, image: ...): tierbench, one static binary, as a non-root
# user (uid 65532, the uid the driver Job runs as). See
# docs/kubernetes.md; without Docker, `ko build ./cmd/tierbench` makes an
# equivalent image.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/tierbench ./cmd/tierbench

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/tierbench /usr/local/bin/tierbench
USER 65532:65532
ENTRYPOINT ["tierbench"]
