// msgpackr loads its native extractor inside try/catch and falls back to JavaScript when it throws
throw new Error('msgpackr-extract is replaced by a stub in this project');
