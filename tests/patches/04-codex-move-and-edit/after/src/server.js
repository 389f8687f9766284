import http from "node:http";

const PORT = Number(process.env.PORT ?? 3000);

http.createServer((req, res) => {
  res.end("ok");
}).listen(PORT);
