#!/usr/bin/env bash
# The main job on the embedded corpus: installs what is missing, builds vsearch
# in release mode, indexes corpus/ into the local catalog (unchanged images are
# skipped on later runs) and runs a sample search — printing the result table
# and writing demo-output/search.html — then serves the catalog over the
# ViSearch protocol on loopback, queries it through the HTTP client, records
# analytics events into its collector and prints their stats; then makes the Rezolve thumbnail set
# of every corpus image and prepares a few uploads exactly as the ViSearch SDKs
# would (demo-output/index.html shows them).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
echo "==> building vsearch (release)" >&2
swift build -c release --product vsearch >&2
bin="$(swift build -c release --show-bin-path)/vsearch"
out="demo-output"
mkdir -p "$out/uploads"
catalog="$out/catalog.sqlite"

echo "==> $bin index corpus/images --metadata corpus/catalog.csv --catalog $catalog" >&2
"$bin" index corpus/images --metadata corpus/catalog.csv --catalog "$catalog" >/dev/null
"$bin" catalog stats --catalog "$catalog"

echo "==> $bin search --image corpus/images/falcon9_rocket.jpg --fq category=photo ... --html $out/search.html" >&2
"$bin" search --image corpus/images/falcon9_rocket.jpg --catalog "$catalog" --fq category=photo \
  --fl brand --fl price --facets subcategory --facets-show-count --limit 5 --html "$out/search.html"
echo "==> $bin color '#C45B3B' (shop by colour)" >&2
"$bin" color '#C45B3B' --catalog "$catalog" --fl dominant_color_nonwhite --limit 5

echo "==> $bin serve --catalog $catalog --port 0   (a local ViSearch server, stopped at the end of this step)" >&2
log="$out/serve.log"
"$bin" serve --catalog "$catalog" --port 0 2>"$log" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 100); do
  url=$(grep -oE 'http://127\.0\.0\.1:[0-9]+' "$log" | head -1 || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { cat "$log" >&2; echo "error: the server did not start" >&2; exit 1; }
echo "==> the web page is at $url/ (and $url/analytics) while this step runs; to keep it: $bin serve --catalog $catalog" >&2
echo "==> $bin similar chelsea_cat --endpoint $url   (the same query, through the HTTP client)" >&2
"$bin" similar chelsea_cat --endpoint "$url" --fl brand --limit 3
reqid=$("$bin" similar chelsea_cat --endpoint "$url" --limit 3 --json | sed -nE 's/.*"reqid" : "([0-9]+)".*/\1/p')
echo "==> $bin track product_view / product_click --query-id $reqid --endpoint $url   (durable queue, then delivery)" >&2
queue="$out/events-queue.sqlite"
for pos in 1 2 3; do
  "$bin" track product_view --query-id "$reqid" --pid "p$pos" --im-url "https://cdn.example/p$pos.jpg" --pos "$pos" \
    --endpoint "$url" --queue "$queue" >/dev/null
done
"$bin" track product_click --query-id "$reqid" --pid p2 --im-url https://cdn.example/p2.jpg --pos 2 --endpoint "$url" --queue "$queue"
"$bin" events stats --catalog "$catalog" --since 1h
kill -TERM "$server"
wait "$server" || true
trap - EXIT

echo "==> $bin thumbs corpus/images $out/thumbs --copy-originals   (400/800/1200/1600 rule)" >&2
"$bin" thumbs corpus/images "$out/thumbs" --copy-originals

echo "==> upload preparation (512 px, quality 0.97; box carried into the upload)" >&2
"$bin" prepare corpus/images/astronaut.jpg "$out/uploads/astronaut.jpg" --box 150,20,350,240
"$bin" prepare corpus/images/china_temple.jpg "$out/uploads/china_temple.jpg" --high-quality
"$bin" prepare corpus/images/coffee_cup.jpg "$out/uploads/coffee_cup_crop.jpg" --box 100,50,500,350 --crop

# A page a person can open: each corpus image beside its thumbnails.
{
  echo '<!doctype html><meta charset="utf-8"><title>vsearch demo</title>'
  echo '<style>body{font:14px sans-serif;margin:2em}div{margin:1em 0;border-bottom:1px solid #ddd}img{margin:4px;vertical-align:top;border:1px solid #ccc}</style>'
  echo '<h1>vsearch thumbnails of corpus/</h1><p>Original (copied), then each thumbnail; sizes in the file names. Licences: corpus/README.md and corpus/catalog.csv (china.jpg and flower.jpg: CC-BY-2.0, by danielbuechele and vultilion on Flickr).</p>'
  while IFS= read -r line; do
    image=$(printf '%s' "$line" | sed -E 's/.*"image":"([^"]*)".*/\1/')
    thumbs=$(printf '%s' "$line" | sed -E 's/.*"image_thumbs":\[([^]]*)\].*/\1/' | tr -d '"' | tr ',' ' ')
    printf '<div><b>%s</b><br><img src="thumbs/%s" height="200">' "$image" "$image"
    for t in $thumbs; do printf '<img src="thumbs/%s" title="%s">' "$t" "$t"; done
    echo '</div>'
  done < "$out/thumbs/manifest.jsonl"
  echo '<h2>Prepared uploads</h2>'
  for f in "$out"/uploads/*.jpg; do printf '<img src="uploads/%s" title="%s">' "$(basename "$f")" "$(basename "$f")"; done
} > "$out/index.html"
echo "==> open $out/search.html (search) and $out/index.html (thumbnails, uploads) to look at the results" >&2
