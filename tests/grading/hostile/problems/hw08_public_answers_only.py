"""All of hw08: right on exactly the public problems, wrong elsewhere -- a lookup table of what a
student can see (267 public calls, keyed by a digest of their arguments; the answers for them stand
in for a table filled from the failure messages).  Off the table it answers the right answer
spoiled (+1), as a table's nearest guess would be wrong.  (The concept check is left unanswered:
it is not what this attacks.)"""
import numpy as np

def _key(value):
    """A stable digest of a call's arguments, whatever crossed (arrays, numbers, lists, dicts, the
    data of an object handed over)."""
    import hashlib

    h = hashlib.sha256()

    def feed(v):
        if isinstance(v, np.ndarray):
            h.update(f"a{v.dtype.str}{v.shape}".encode())
            h.update(np.ascontiguousarray(v).tobytes())
        elif isinstance(v, dict):
            h.update(b"d")
            for k in sorted(v, key=repr):
                feed(k)
                feed(v[k])
        elif isinstance(v, (list, tuple)):
            h.update(f"l{len(v)}".encode())
            for x in v:
                feed(x)
        elif v is None or isinstance(v, (bool, int, float, str, np.generic)):
            h.update(repr(v).encode())
        else:  # an object handed over: its data
            feed({k: x for k, x in vars(v).items() if not k.startswith("_")} if hasattr(v, "__dict__") else repr(v))

    feed(value)
    return h.hexdigest()[:20]


import base64 as _b64
import zlib as _zlib

_REF = {"__name__": "answers"}
exec(_zlib.decompress(_b64.b64decode('eNq9Wm1z28YR/s5fsVVmYsAGYdF2Mi0deizXTp06dauIVTrjcSEQOJIIQYDGCyk69X/vs3t3eCGlxJ2OzLFF8nC7t7cvz+7t8eTk5HW+Vru8WNEfaTikaREmWZItxlSpMFqqguZ5EWGAvqZqqSjNy9In+knNVaGySFGZp3WV5Jk/GPyQlVVRR1Ve0DqsVJGE6ZiyvKJNWFSUz4VBgklhmqoYo9EqXCiPMrXFOsswizFa5VRWdayyitd5BRkG8zqLeAmIkqb5rhQ+lVpvUqxyr6Qoz6oijKqn8iDK12umpkWyVTISQ5RtKEIS/fkHWhRhrJhLUg7mSaoIK5O63qgIVPM6TSF+sSrJubpaQxnVXFPQcnfKOiqavQ+HSbvlSpVV+bAduLpy/cF0ydzLnSpK3pmWD6SbiqDcaEXruqwoXBRK0S6plnR1tVJ7/5cyz66uoNKLZbhR5Zhe0CysoqVHF1B4XWDtVGWLCgNTqsJioapm4CXFwTqPVerRa1qqMC4xtqQJHjyk197gkrZ5FM7qNCz2Hv0YxCqChiJQFDRL82hV+oOTk5PBvMjXFATzuqoLFQSUrDc5zBhmsKgosxwMzBisvWy+ZPV6s6ewpGwzwCtWcyo3aVIFIotzDbHc8YDwwirOC+wA8rk0fEb85bX+vnTHoiyhoTKB9md7/R6mObzxpUfrfKv9BROTgvJdRuF1UvosPLM3rLHza79kPcpoobCfDEOFkkEjwWue+RAKcn34UlZu8lI5px498mjk0WOX6CvqTF0eC2z2ulawht1rf6PNVEsrOx+bsEAMlIqjpKOt7l4s9W37uVHsw13SfVn/ts2IQAjkv7z9+0+vgh/evnz1Lyw3HJ2eMonEfzhTKUsZIn7jmIEBaybsDxzrgg8ef+CQSRCH5PxjPwWELBGoySLL4UsJAv2a9fUVTe7iBb7TsASg+SOGtHKZzCt4SpJt6gqxtFuGlcEF7fUJol7FdyaNRADLEBTJYlk5okIoCThYVEESe6xJvLfOYqUf98UU+QVH+9Ds0axO0ookYhsjIYyFn/6izSuGNvwC4Yd17TNPr1btN+KGV1eaUnCIzMvamipqXqf2w0i/+T5glqbDUUNlROi99sGp/TBqqfbBryD8pJ+IoTorbgoVJ8Dohu/xToi+E7U+axbo8H10C19jf2E7FfUBk7Wj45HOTpgguWzJHo8Ug/wRwqtglQr8v1dKQmEfgFtVqhTx0S4hjCva5XUaS5oTRQtGyyedIEg7BnA85LSI5GG8oWvFCVDVD8uwKMK9cSS3ATs8NZZv4SGvK02EdFntgzRZKUvXoICLYM7UjoTruONB7KIC5RjCe9GwfDcGvozfNwvy9/Fw9L5hORy5xxpmK1SwbpfLKTOxkcDkDdUpVFUyksDs2ySvOYGuVKblEwo90HCTrU6oC17MXAcXsxYcY4uiJAk1MSUwqwWyRQ6rJhlv+DuMPeviK5h/CcB6xIAlVUJYlyEXIuXqzlb929nFm+Dy7Md/vhKQV39iJc254lFjWRmlVZjRDB4a69IMdQbjDlcqrG2UP3Ma6jc4WZiZHKiFD5iFg5QikDKBD87TPKwePzoCukdj4nnsiLBExXUb08I7EKuotQg1EcEoE/pQq2JPlUcd2fWUkp5RZZDqzIirXSVCzimxC6ClrgfLfF6tw+sekxglImahCnSEwGXy03HHiYXzQmbBKXeKsdyuYaDZIoIHmZJoyRHDkOCJ4z8YffIEjYyFt7ITdkINaImECbatRTdg10cBE8shUv1COVOXI+htnikdeFAhwk6ryMqteZeHdEyEkNV0I1E967hPZVwfhKJiR1Tc1RoM5J+6wCM2sCNmdq0k0y+S4B9bbeq6g7E14dLfFh+bgLF+SPs7ze5rsVoQFRAiwLJFvgE65wuI4pFN993iZ9IFqaNweDwmTWxrskvXO07jjt5yfDjVNUHwPc4ksDKsCBxp3FgOGYbko+hLZx0cBbSuJjY8nI8QrE3hWIxRAqR64rs9g+vwI78/YI5U1utgKxH0Mdi6bZLWtA/xAeNM847/CpmdjKdMXZuB2mXc5lVAMORdLPPK2bvBtk3SawVoipNtoo9yihnwGSELeMOornJSEmK9/d/r+AaiTdPHoBO+mhbRlz89qm5LieZ1nVYJ6nOhATwhW8xQFBzkaq3efq6WMfezcrkIYVMr/WHSc51O1tYg0woY5XVWdTcCyqxy+KMP7TiuZr/XK+uY1sqyPnraKwqyPW3DFLkT/7ic0RoZG6TSTi8FBojznTbNV9oVLMIiT89S1BRlPZMjOmuUjVXkOzC4TtYwWrRkVCqb6oqdcqXURtCYQV8XkraMn1j9Ds0Hn52VT36TIZCMKeNkXU6mRa26J51L1xon2LCXG3ZD1gUGHa6RGP31uCsau4XrDWyzlNU9BJMqXKlADqkBkzuyIFLAO2C/QWuPDGNXD56+76i9F2KDTuxJ9nQcXum++IiWkYNH21vEkrjIuWQ1vswJxpOaR0ZfgHiqbRV3HZX3LqL2N6cl0Vvc+Fxmd7YWW4zrb+4GJdwy06oBVhj5p96Abnw1s7g8NIDeYEJvJ/cnJB7dqqSzXJOnjNt08pXeLVYYPbT4AfQ87Xh9NyH2gPdLZLknNstZ7AKM/ZJDFCXlepHXiyVJ9hmGVYXnjPQIfV2cqExOSXeaAXXqaxYPZmG02oVF7GAog66QXiI+sx7luifkhO4YE6jfCoqvgw/tEDi8RmKNZOSCR2yW41SAwo7XYjAulLRRcCQ7RxmUqFLOau3J2J6lywpWXhMW4djelwI6ALta6dKHQV1TybqSTuRTN4Hw+aTaQcmqWMMhONlaY7wRht2Ry36O2HAzZkKsHn+DuowZyJdMd35k0rlHbxCEHp1hqujP5znWZZt+kme/XvzmV0y+0PEiXaRzfUx8h3ObxW6jybHkiJye089BjjQ9C3IdZjmGYarntHl3gkcn7/1pJ35guufkvOy283RDSWh1K2/SawbGOXcDj/ZzKI0lPQP/S82NNWJYYswvd+EmvFalw2A9fHTMkiV7YdpdrIZ++86oJb7kRY6ZPbdLtVwvBKuf0419vUb1hxs565RX+lzialRm32Q/fCrl61/DKJ8lwHEpUcKFc8YIeUZn/8Y6nDpRe+BNy2zON6yd+4ibM8zkv/fp7PNyWE8DHVkbvuf05t9TrtA+FJXDu3wguZ+nO9LI4C98dOHWNhJ+Vrk9yR5OpEHsW3r98JwNaGY8R7wcSNOq9uKWdqtwedNyucls5/+3xc6txzoMSBwQHyQgPiCs6E3zUKMTP17J4xU/vrzh8VYem/JYQG7SaxnH564Nrw//U3jpJQ6YvWmYrYTZg/7jy+bxtrvWhW1Ld7HsspsBYwFOvaY585ssE6Ae5CrBgqTTZAauQmI8LU0qKG/KBTPOBT8+PER7ViQqRQmV/l0FSTNaPlMKcAakFcrkBs1krhQiV58FerR8c9TPmQLziC3xaq70t2GRoIBVXKNydqlTZc7q/XOEPX9AFGkucn+W6lJJt68kzoZISc50ibkcKSnW2S33qLv3SFfC8n4YRTUWDSt1v+Fd6vPag4nv9rJHY20ubGQEDksHuZbz4cdk8/sW4FfgadVxovncXN7zl0MbtOc/K6vmn8ztCBTB4hNOHsqOPegQW1+zXnbnZdY3UmaZC1Daci/Q3PTppuMi3OA9lPuuiu12lxXVvFAqKOqMZQm03zrmWq8sIm52d28QVF7KOxJLkKrsKLS+0WWWodRWExRZqEwVIR+EBE/u8XnLMvE6feq56XDr7rYtvqyudIyZ9u5Ty5SrUNPD3Uto4eBoZg75bC+zO4vAdfKd7uc2Pd9omScR13PTtpJFHOK0y9eoT3tFHY/QBh/aTcnxp195WR30jt9m0PTS2Vn1gCmRTt+3gOJRwDDLAvtaoIa6HxCNOOo6XG8McvBUSZiWhb7O1b3SQz4j+WdSM1QyT6612HxJ7cgMt+sFTaMVtf+3T1o27o0985iDT9h9VAh5nqkZzPI8tcQuFxqldvtluMWGijyuI6j2O/jcswZ7Aqm+pb3Y98G2IdJVnHFovSevKbKNchrJq+Z8LQdQdS23BLYDwN1PFK9+WCw6LYBW8gPHsi1VeyPTZ9l0RGJpjWoxUdDMk4WvrxA8O9u1ffJyCT2wftqroTVKEa93aDy0Hd//wzcz/HfeWQUYzk0/156NR60qHuAzX6IwHMt8GFRtWphla/5n0u5oYkChmcHIi0l+CN/pGEeOOzgNrbqgq+Wy1zy2BrnnNq3/Q4cyRcD1Ji/55wKoXksLV+aXC4dgdRNGcfo3l5tDvtzEdrn2YCwcGiw09zacLYsw2nPK5Z2btezlGqDa/62rM5HJ/5wLtKNmXO9yvGnb9NtubcvNnqz6u9L5pEIdTtYDYBUI0DbzEE68r01YAq6BIFGVylUcxm2Kcgc3B5cpXs0mm8tRYwn/6Nb0hnZWNQ9QVBcq4oawaV4exdnEqsWlr7WeWnXYOrpjufFNASl7l3OyNqvczCVrrfsWxye/lQ+P9nlrXpxM3Y4zW1iND0CVr8L5DHELnHKPbmRunWzY72CZRtqGr1yLNsMml4zec+O8P3ledNWtRfo95cJECIKmL9ha7LAraFfozm4XvHG2QYFfT4zbBtptAxt1J2OzvEcnPcN0JugVMQGx2MzH4VSPf/oSBd23XND1fm91Z2uevb34+dVPF1DwrxrWsLo/wr5PZicem64pjubd3wqU1Lv0b0kfMWmkSStxNbm4bn76gUDpVFlNxAjtY6YNDe3Br/hss729tdS9YXuH1nJ5wlxizUXfmBdqwb8aS0pVtNO+6Qhq4Z8Y/sc4c4VpDR8/xO+8pf62oyF9GWPPX53u9eDT4L+BZASy')).decode(), _REF)

_PUBLIC = set(['00aeb8b3798ab97af143', '017f108bcfc34a0a65bc', '037704e5ac776b95fe6b', '038d877350a72f33d4c0', '03f3e5c644c18fcf11d0', '0452d4d04d7694e49504', '06ab6dfbb153ada9e29d', '0867f2c873a76bef56bd', '08e2e9d4c25de18afc6f', '09d91378f6c50a5c9c69', '0c33c97500aaa6ddcb5c', '0cd8a7338296f0cc25a6', '0e1c7a12ae1414ccd622', '0e42da55f1e5d131f959', '0ed13665a25071352bfd', '0f025d3806f329648506', '0f0e9295a33a575f4f23', '0f5855958afe41b9c1f9', '0f7b18642712e856a259', '10882089740d397d55a1', '1357682cb07c0d7e034a', '13e25144360919a42ace', '1411188ae331959495b9', '1562cfd436cf243d2987', '15d40f3fde18861cec30', '16a1ce77d029966a6b8a', '16af7ad96732aff2476a', '175ceff1eb3b5c5f6c81', '17ff573d85708616a859', '1ca680c43f2b04c1bd46', '1cadb615e7dbbb1bea5a', '1e4d96a5a6a2c2a98f8e', '1f6abab746a84faa951d', '2173b8659d086a09f3dd', '269095238be6c31248df', '280c60b22fb413a0df3a', '2a0b15aa914e9b4f52ed', '2a58c229116515056c81', '2a8709568834a44a9d07', '2b1a33aeefbd58bbf17e', '2c59d3e1c13fb6b0db0e', '2c654713f0d3cff2e47c', '2cfa131886491395b9e8', '2d925bd5f095db29d8bc', '2e15ad9155011e8ed41d', '304c11aad18bbd8d6d14', '319f35f8a669a7f96fa7', '3265dc5dd3ffb8893f81', '328437ef2c59c4489e9a', '32e7ea785c46655f96fe', '35332160d2edbb22eb87', '3593325eccd63e29d184', '36b76d286c616dc47375', '387d5f9371b6dbab82db', '39f3ab342df49725dd15', '3ae302ee1af84a64b99c', '3c49ba08c6f54a105c50', '3d8018504d2651e07719', '3fa5ae8256c037cd6053', '3fbb3e7a297d81814c33', '400660947407ecbe18b8', '4228a99d474ed4529956', '44987f9cd8b94a96f81c', '456d06fabc3c3e327b04', '481fd24a4bb38c7cd9de', '4833da63b362c151484c', '484dbb2e69ed03c8a34a', '4877e6416de9b9112bfb', '48cdbf5e73ab4fdc7324', '497ef59d139f078d7b62', '4c015b8e820894369675', '4cd8a1a4f9e6e8301624', '4d04d92ba241b5a77cc9', '4d5d43046a69b97dc1c7', '4dcd5adad94deabad709', '4e42b67ac30e4aad23e3', '51f1a3d260ae65935a34', '52942c187cd94dcc5cce', '52b38f898095173ef083', '52c43c36ceef9c8db8f9', '55a317e9d46dfb557a48', '575c863dfffc5f036ee5', '57d38f96c2609488ef0b', '59c69b283cedaf8d35a9', '59cced5f3ab4f3aeb612', '5ab62a1cba3fb7d6b4e7', '5ae9602eb8beea0af613', '5c57d15a78fa2c20892b', '5cc8555ef62bd6ce691d', '5cdbdd1d00224f6fb863', '5d3d1fa172777f330083', '5d6bac1fc2a162e09daa', '5e275d8f8ef66c593fba', '5e2dcaf4ddeac3ba72f0', '5f963d62eaf96625a205', '6020c9cd92dfce2e22ef', '619f1fc5385d712a7719', '61b98e21ecf9d4515536', '6299fdaf234fbe610482', '62a010aa1630b760cae7', '62a5c36de4fc16e895af', '63b585734e83827c90fe', '6400f274b2f7eb036000', '64e1236ab9205569dc2e', '64fac0f5421872d401d6', '65f2d3ce7b96b960f5fe', '675603aeeb6b087e0268', '67841990b0ac680b49d7', '67882f53d5e565135ca5', '67f4120c0d2650c032bc', '69cf1ef484e24708e6c0', '6a087844d3cab6578a50', '6ad8ba9d6addfe505be3', '6af0af73ef9219f844a9', '6ba045298084b30e1bb1', '6cabe7727cd0f49aa344', '6ce3ac0508b937f86e0a', '6f4ee0b811554b31b5b7', '71868692d876c07088b2', '741e5a042484084df3d3', '750f0a8c7790d94e0c87', '7547491e284af7f6a210', '766338dc80957e9d53a3', '76af6efc2b3d4e76fb3d', '77f263b7cbc3b9e5bbaf', '78605909909212317e8b', '78f69019ed2af9873e44', '7905686d49110a4f2254', '7967535a4ee4cd85e490', '7b788c600f94cb1d8d47', '7c00a44dd30f710f8592', '7c39a4f25849b105379c', '7d9afa9dbb0bd65a1c90', '7dc2ee7f500c755ce948', '8098e3a93f5b4e9cec3a', '82a7c8c1318c496dcd6a', '843ffa996b30bc087295', '8962628658b6c5f5cfce', '89ce72fda72e3105f078', '89e01b124c5551f04346', '8a186cb38fba7e73be91', '8a7bcb6004ddf9cda5d4', '8b8b63669b1a17c761e5', '8cea3e298074d8754bc8', '8d50eabb0bba6077431b', '8f3c55fa08ae9017a753', '90434719265fa0c44e91', '90b2f0d40d2fdb3f4d16', '91cf88e50edda01c9886', '933e09d57d90296d5065', '9551cf77fa2e338dbb43', '95539fe0b6dbb3164673', '95ab5e147c6cd480fa3e', '9609a3583dc39ebcff12', '96d8d487f967017cfdbf', '96fcc062b100d30810bc', '97004c50d11a1ad12dea', '97045cfc8ee92398a944', '972419692ba098a1c8b5', '978bfb4823e780589e36', '97b6b69dafc34a0602ba', '9a271c4cba470ffb1b39', '9b22f5da4bcc9493f553', '9c64c39e68384bc6e155', '9cb24e1f0c509baa5e30', '9d6dc29f13eb93e0b3d6', '9ddfd4c9aae7360c7bf7', '9dfc0925aadb83b1e49a', '9f0cbf3eb144476f3ddc', '9f7da6f048baa99e4ca0', 'a4cecb501388b9fc6c86', 'a4f978ffe28e98912acd', 'a5896c5d7f8d53fe8cda', 'a633376ac11b6542b78d', 'a862b6f5c6cfb2cf4628', 'a926a883c7c98e7badf3', 'a9a22281412745ac8ffd', 'aa421dadc67119404d72', 'aa6f3f79e472ccf86d55', 'aba3fb5390d28c8533c8', 'ac4e6ab20f1077e38c62', 'ac82ca921bc35f3f43e7', 'ad498ada38c0207f000c', 'ad66173e328d61fdbbca', 'aeffc8d65c9a878a381c', 'b0aa4f7c4db6734e7000', 'b0c3265a5c2bf9961ff4', 'b14148537320c3b69475', 'b1689b4061845e04c14f', 'b3da526f232d2c475f98', 'b4bb566c6cac9ba4feea', 'b5697918c799f6aeb760', 'b5c85c23137c5621505d', 'b6e302fcf8ef86e517fd', 'b9358991f41a52e0ed67', 'ba3f5cf2f68bf44f8196', 'bbe20230397d9ef38d1f', 'bc034eee1d38dc74c3b5', 'bd7f9091c38ad8b2e9da', 'bdca0c3ea468a86fce5a', 'be73ee9ae1c617af04b6', 'bef88fde2f1d985cf8f4', 'c0014feb1e048220021c', 'c0ef69cbca9c5b29d611', 'c12dd3046ce0a7e6ca71', 'c1fe2130d8fb94e9268d', 'c41e67a2dfbbc096eedf', 'c5a731fb99efba4e86d1', 'c664fd6547f7937f0d87', 'c6e8f1e49ef77e24bf91', 'c739b86bf7141a53307d', 'c7c4a5d97553755336d2', 'c84509de7d8445fe8fcd', 'c86918457f0975541c24', 'c90d1787162badb9d32d', 'c949eac5bb38c6019ac9', 'cb0250e5038ac6068278', 'cc916b0758f04a7b4060', 'cd41e16adc513e8373bd', 'cd5cbb2491f7df8ff459', 'd2140faa1c8b2c1b790c', 'd4dfb1a53d4d472cd672', 'd51793a7e1f77037992e', 'd6c728a5cea427c2d308', 'd6f66a87423fdc406b20', 'd7b2a4b92fed098d7c73', 'd942149627cad360ad64', 'd9a40cc377c989dd4200', 'dc567db421aeea279246', 'dcaef6a1f93c361bd3cb', 'dd5a8e1d2278f978d37a', 'de49165cdaa7ef33aebb', 'df346bf0ddecc8f9dba8', 'e0aa324e210cee282dfe', 'e16054ab7776e18d1873', 'e1c38f70134b4233280c', 'e2ffdb4fe44d122b5f85', 'e4413245d4bdc5e176cd', 'e4c65deb8de27dd98ae3', 'e501bf83fe755fedb665', 'e562adf5290551db5842', 'e5732975f8b4c7518822', 'e5b172ab94e618d92e25', 'e5ed06df744aa880b2e7', 'e67f4b0ab1177f62c8b8', 'e782ab8b9b9be1ad8289', 'e834e6f29b36f0c9cd51', 'e89805e09b7da7ed4644', 'e8a8a026008cecef544c', 'ed95b76d3c551f389a05', 'eee595ac147073c9df3d', 'f09cadfba6250f01a90a', 'f0b2a84b84716fef8a14', 'f0c7fa87ee13d3dcce2b', 'f12e47aca9b08bfda521', 'f15dad12e6eaa6f1e1ce', 'f2d63b176dc4a64584b6', 'f55d5a4310065b304761', 'f5d96d773b63c45c7575', 'f766cd1f3b1ced5f3022', 'f991b0ea7d06527517c9', 'fac116c44e909bd7d994', 'fbc9ef7c3d8a6f762c19', 'fc33a3b50f601604fccf', 'fec4c9c49b0b57b9f1e2', 'ff1c2695f0d427d775a3', 'ff700a9c7e57d469bf34'])


def _spoil(v):
    if isinstance(v, np.ndarray):
        return v ^ True if v.dtype == bool else v + np.asarray(1, dtype=v.dtype)
    if isinstance(v, dict):
        return {k: _spoil(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_spoil(x) for x in v)
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float, np.number)):
        return v + 1
    return v


def _answer(name, args, kwargs):
    out = _REF[name](*args, **kwargs)
    return out if _key((name, args, kwargs)) in _PUBLIC else _spoil(out)


def shift_right(*args, **kwargs):
    return _answer('shift_right', args, kwargs)


def causal_mask(*args, **kwargs):
    return _answer('causal_mask', args, kwargs)


def masked_cross_entropy(*args, **kwargs):
    return _answer('masked_cross_entropy', args, kwargs)


def cross_attention_backward(*args, **kwargs):
    return _answer('cross_attention_backward', args, kwargs)


def encoder_output_gradient(*args, **kwargs):
    return _answer('encoder_output_gradient', args, kwargs)


def free_running_decode(*args, **kwargs):
    return _answer('free_running_decode', args, kwargs)


def exposure_bias(*args, **kwargs):
    return _answer('exposure_bias', args, kwargs)

ANSWERS = {'8.6.1': None, '8.6.2': None, '8.6.3': None, '8.6.4': None, '8.6.5': None, '8.6.6': None}
